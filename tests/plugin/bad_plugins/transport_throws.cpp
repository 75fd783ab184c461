// Defect: the transport's functions let a C++ exception escape across the C ABI, on cue: the
// environment variable TRANSPORT_THROWS names the function that throws (init, isend, irecv, test,
// free_request, allgather, finalize). The host must turn each into an error naming the plugin and
// the call (or, from finalize at the link's end, a log line), never die of it. Otherwise a world
// of two processes, this one process 0, whose requests complete at once.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "bad_transport.h"

namespace {

void throw_if_asked(const char* function) {
  const char* which = std::getenv("TRANSPORT_THROWS");
  if (which != nullptr && std::strcmp(which, function) == 0)
    throw std::runtime_error(std::string("transport-throws: ") + function + " lost its device");
}

int the_request;  // every request: nothing is allocated, so nothing can leak

tessera_status init(void*, const tessera_transport_config*, tessera_transport_info* info, tessera_error*) {
  throw_if_asked("init");
  info->process_index = 0;
  info->process_count = 2;
  info->max_tag = INT32_MAX;
  return TESSERA_OK;
}

tessera_status finalize(void*, tessera_error*) {
  throw_if_asked("finalize");
  return TESSERA_OK;
}

tessera_status isend(void*, const DLTensor*, int32_t, int64_t, tessera_transport_request* request,
                     tessera_error*) {
  throw_if_asked("isend");
  *request = reinterpret_cast<tessera_transport_request>(&the_request);
  return TESSERA_OK;
}

tessera_status irecv(void*, const DLTensor*, int32_t, int64_t, tessera_transport_request* request,
                     tessera_error*) {
  throw_if_asked("irecv");
  *request = reinterpret_cast<tessera_transport_request>(&the_request);
  return TESSERA_OK;
}

tessera_status test(void*, tessera_transport_request, int32_t* done, tessera_error*) {
  throw_if_asked("test");
  *done = 1;
  return TESSERA_OK;
}

tessera_status free_request(void*, tessera_transport_request, tessera_error*) {
  throw_if_asked("free_request");
  return TESSERA_OK;
}

tessera_status allgather(void*, const void* send, size_t bytes, void* recv, int64_t, tessera_error*) {
  throw_if_asked("allgather");
  for (int p = 0; p < 2; ++p) std::memcpy(static_cast<char*>(recv) + p * bytes, send, bytes);
  return TESSERA_OK;
}

}  // namespace

extern "C" {
BAD_TRANSPORT_QUERY("transport-throws", "transport functions that throw on cue",
                    (plugin.transport.init = init, plugin.transport.finalize = finalize,
                     plugin.transport.isend = isend, plugin.transport.irecv = irecv,
                     plugin.transport.test = test, plugin.transport.free_request = free_request,
                     plugin.transport.allgather = allgather))
}
