// Header-only helper for transport plugins (SDK 1.1): fills a tessera_transport table from a C++
// class, turning exceptions into statuses and a timed-out wait into TESSERA_TIMEOUT.
//
//   struct MpiTransport {
//     tessera::sdk::TransportWorld init(const tessera_transport_config& config);
//     void finalize();
//     tessera_transport_request isend(const DLTensor& chunk, int32_t peer, int64_t tag);
//     tessera_transport_request irecv(const DLTensor& chunk, int32_t peer, int64_t tag);
//     bool test(tessera_transport_request request);                     // true: completed
//     bool wait(tessera_transport_request request, int64_t timeout_ms); // false: timed out
//     void free_request(tessera_transport_request request);
//     // optional; its presence fills the table's allgather:
//     bool allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms); // false: timed out
//     // optional (SDK 1.5); its presence fills the table's abort:
//     void abort(int32_t exit_code);
//   };
//   static MpiTransport mpi;
//   static tessera::sdk::TransportBuilder<MpiTransport> transport("mpi", mpi);
//   plugin.add_transport(transport.table());
//
// The contract of each function (threading, buffer ownership, matching) is in tessera/sdk/transport.h.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>

#include "tessera/sdk/cpp/errors.hpp"
#include "tessera/sdk/transport.h"

namespace tessera::sdk {

// What init reports; the builder copies it into the host's tessera_transport_info, only as far as
// the host's struct_size reaches.
struct TransportWorld {
  int32_t process_index = 0;
  int32_t process_count = 1;
  int64_t max_tag = 32767;  // the least MPI guarantees (MPI_TAG_UB)
  // SDK 1.5 link properties (transport.h); 0: unknown, or no limit. Written only to a host that
  // knows them (an older host's struct ends before them).
  double latency = 0.0;           // seconds per message between processes
  double bandwidth = 0.0;         // bytes per second between processes
  int64_t max_message_bytes = 0;  // the longest chunk isend/irecv take
  bool device_memory = false;     // chunks in device memory are accepted
};

template <class Impl>
class TransportBuilder {
 public:
  // `impl` must outlive the plugin (a static).
  TransportBuilder(const char* name, Impl& impl) : impl_(impl) {
    table_.struct_size = sizeof(table_);
    table_.name = name;
    table_.context = this;
    table_.init = &init_entry;
    table_.finalize = [](void* c, tessera_error* e) { return guarded(e, [&] { self(c).impl_.finalize(); }); };
    table_.isend = &post_entry<true>;
    table_.irecv = &post_entry<false>;
    table_.test = &test_entry;
    table_.wait = &wait_entry;
    table_.free_request = [](void* c, tessera_transport_request r, tessera_error* e) {
      return guarded(e, [&] { self(c).impl_.free_request(r); });
    };
    if constexpr (requires(Impl & i, const void* s, std::size_t n, void* r, int64_t t) {
                    { i.allgather(s, n, r, t) } -> std::same_as<bool>;
                  })
      table_.allgather = &allgather_entry;
    if constexpr (requires(Impl & i, int32_t code) { i.abort(code); })
      table_.abort = [](void* c, int32_t code, tessera_error* e) {
        return guarded(e, [&] { self(c).impl_.abort(code); });
      };
  }
  TransportBuilder(const TransportBuilder&) = delete;
  TransportBuilder& operator=(const TransportBuilder&) = delete;

  const tessera_transport* table() const { return &table_; }

 private:
  static TransportBuilder& self(void* context) { return *static_cast<TransportBuilder*>(context); }

  tessera_status timeout(tessera_error* error, const char* what, int64_t timeout_ms) const {
    const std::string message = std::string("transport '") + table_.name + "': " + what +
                                " did not complete within " + std::to_string(timeout_ms) + " ms";
    return report(error, TESSERA_TIMEOUT, message.c_str());
  }

  static tessera_status init_entry(void* context, const tessera_transport_config* config,
                                   tessera_transport_info* info, tessera_error* error) {
    return guarded(error, [&] {
      const TransportWorld world = self(context).impl_.init(*config);
      // Fields past the host's struct_size do not exist in the host's struct.
      if (info->struct_size >= offsetof(tessera_transport_info, process_count) + sizeof(int32_t)) {
        info->process_index = world.process_index;
        info->process_count = world.process_count;
      }
      if (info->struct_size >= offsetof(tessera_transport_info, max_tag) + sizeof(int64_t))
        info->max_tag = world.max_tag;
      if (info->struct_size >= offsetof(tessera_transport_info, device_memory) + sizeof(int32_t)) {
        info->latency = world.latency;
        info->bandwidth = world.bandwidth;
        info->max_message_bytes = world.max_message_bytes;
        info->device_memory = world.device_memory ? 1 : 0;
      }
    });
  }

  template <bool Send>
  static tessera_status post_entry(void* context, const DLTensor* chunk, int32_t peer, int64_t tag,
                                   tessera_transport_request* request, tessera_error* error) {
    return guarded(error, [&] {
      Impl& impl = self(context).impl_;
      *request = Send ? impl.isend(*chunk, peer, tag) : impl.irecv(*chunk, peer, tag);
    });
  }

  static tessera_status test_entry(void* context, tessera_transport_request request, int32_t* done,
                                   tessera_error* error) {
    return guarded(error, [&] { *done = self(context).impl_.test(request) ? 1 : 0; });
  }

  static tessera_status wait_entry(void* context, tessera_transport_request request, int64_t timeout_ms,
                                   tessera_error* error) {
    if (timeout_ms < 0)
      return report(error, TESSERA_INVALID_ARGUMENT,
                    ("wait: negative timeout " + std::to_string(timeout_ms)).c_str());
    bool completed = false;
    if (tessera_status status =
            guarded(error, [&] { completed = self(context).impl_.wait(request, timeout_ms); });
        status != TESSERA_OK)
      return status;
    return completed ? TESSERA_OK : self(context).timeout(error, "wait", timeout_ms);
  }

  static tessera_status allgather_entry(void* context, const void* send, std::size_t bytes, void* recv,
                                        int64_t timeout_ms, tessera_error* error) {
    bool completed = false;
    if (tessera_status status =
            guarded(error, [&] { completed = self(context).impl_.allgather(send, bytes, recv, timeout_ms); });
        status != TESSERA_OK)
      return status;
    return completed ? TESSERA_OK : self(context).timeout(error, "allgather", timeout_ms);
  }

  Impl& impl_;
  tessera_transport table_{};
};

}  // namespace tessera::sdk
