#include "plugin/transport.hpp"

#include <cstddef>

#include "plugin/guarded_call.hpp"

namespace tessera::plugin {

bool Transport::has_allgather() const {
  // A table built against a smaller struct ends before the field: reading it would read past the table.
  return table_->struct_size >= offsetof(tessera_transport, allgather) + sizeof(void*) &&
         table_->allgather != nullptr;
}

bool Transport::has_abort() const {
  return table_->struct_size >= offsetof(tessera_transport, abort) + sizeof(void*) &&
         table_->abort != nullptr;
}

tessera_status Transport::init(const tessera_transport_config& config, tessera_transport_info& info,
                               tessera_error& error) const {
  return guarded_status("init", error, [&] { return table_->init(table_->context, &config, &info, &error); });
}

tessera_status Transport::finalize(tessera_error& error) const {
  return guarded_status("finalize", error, [&] { return table_->finalize(table_->context, &error); });
}

tessera_status Transport::isend(const DLTensor& chunk, int32_t peer, int64_t tag,
                                tessera_transport_request& request, tessera_error& error) const {
  return guarded_status("isend", error,
                        [&] { return table_->isend(table_->context, &chunk, peer, tag, &request, &error); });
}

tessera_status Transport::irecv(const DLTensor& chunk, int32_t peer, int64_t tag,
                                tessera_transport_request& request, tessera_error& error) const {
  return guarded_status("irecv", error,
                        [&] { return table_->irecv(table_->context, &chunk, peer, tag, &request, &error); });
}

tessera_status Transport::test(tessera_transport_request request, int32_t& done, tessera_error& error) const {
  return guarded_status("test", error, [&] { return table_->test(table_->context, request, &done, &error); });
}

tessera_status Transport::free_request(tessera_transport_request request, tessera_error& error) const {
  return guarded_status("free_request", error,
                        [&] { return table_->free_request(table_->context, request, &error); });
}

tessera_status Transport::allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms,
                                    tessera_error& error) const {
  return guarded_status("allgather", error, [&] {
    return table_->allgather(table_->context, send, bytes, recv, timeout_ms, &error);
  });
}

tessera_status Transport::abort(int32_t exit_code, tessera_error& error) const {
  return guarded_status("abort", error, [&] { return table_->abort(table_->context, exit_code, &error); });
}

}  // namespace tessera::plugin
