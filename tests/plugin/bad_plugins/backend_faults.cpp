// Defect on cue: the environment variable BACKEND_FAULT names what goes wrong in an otherwise valid
// backend "bad-backend-faults" (host memory, one "fill" kernel):
//   alloc_null      alloc reports success but hands out no memory
//   alloc_throws    alloc lets a C++ exception escape across the C ABI
//   copy_throws     copy does
//   free_throws     free does (the host calls free from destructors)
//   threads_throws  set_num_threads does
// The host must turn each into an error naming the backend, its plugin and the call (free and
// set_num_threads: a log line), and keep working.
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "bad_plugin.h"

namespace {

bool fault(const char* which) {
  const char* asked = std::getenv("BACKEND_FAULT");
  return asked != nullptr && std::strcmp(asked, which) == 0;
}

tessera_status alloc(void* context, size_t bytes, void** out, tessera_error* error) {
  if (fault("alloc_throws")) throw std::runtime_error("bad-backend-faults: the device is out of memory");
  if (fault("alloc_null")) {
    *out = nullptr;
    return TESSERA_OK;
  }
  return bad_plugin_alloc(context, bytes, out, error);
}

void release(void* context, void* ptr) {
  bad_plugin_free(context, ptr);  // freed first: the exception after it loses nothing
  if (fault("free_throws")) throw std::runtime_error("bad-backend-faults: the device is gone");
}

tessera_status copy(void* context, void* dst, const void* src, size_t bytes, int32_t direction,
                    tessera_error* error) {
  if (fault("copy_throws")) throw std::runtime_error("bad-backend-faults: the copy engine hung");
  return bad_plugin_copy(context, dst, src, bytes, direction, error);
}

tessera_status set_num_threads(void*, int32_t, tessera_error*) {
  if (fault("threads_throws")) throw std::runtime_error("bad-backend-faults: no threads");
  return TESSERA_OK;
}

}  // namespace

extern "C" {
BAD_PLUGIN_QUERY("bad-backend-faults", "backend faults on cue",
                 (plugin.backend.alloc = alloc, plugin.backend.free = release, plugin.backend.copy = copy,
                  plugin.backend.set_num_threads = set_num_threads))
}
