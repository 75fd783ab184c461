#include "client.hpp"

#include <cstdlib>
#include <string>

namespace transport_test {

World launched_world(const char* count_argument) {
  const World known{launcher_rank(), std::atoi(count_argument), 0};
  set_process(known.index);
  expect(known.index >= 0, "OMPI_COMM_WORLD_RANK is not set: run under mpirun");
  return known;
}
namespace {

struct ErrorSlot {
  tessera_error error{};
  ErrorSlot() { error.struct_size = sizeof(error); }
  Outcome outcome(tessera_status status) const {
    return {status, status == TESSERA_OK ? std::string() : std::string(error.message)};
  }
};

// Ranges are checked by the transport: the test passes even out-of-range peers through int32.
int32_t narrow_peer(int64_t peer) { return static_cast<int32_t>(peer); }

}  // namespace

int launcher_rank() {
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  return rank != nullptr ? std::atoi(rank) : -1;
}

Outcome Client::init(int64_t timeout_ms, tessera_transport_info& info) {
  tessera_transport_config config{};
  config.struct_size = sizeof(config);
  config.timeout_ms = timeout_ms;
  info = tessera_transport_info{};
  info.struct_size = sizeof(info);
  ErrorSlot slot;
  return slot.outcome(table_.init(table_.context, &config, &info, &slot.error));
}

Outcome Client::finalize() {
  ErrorSlot slot;
  return slot.outcome(table_.finalize(table_.context, &slot.error));
}

Outcome Client::isend(const DLTensor& chunk, int64_t peer, int64_t tag, tessera_transport_request& request) {
  ErrorSlot slot;
  return slot.outcome(table_.isend(table_.context, &chunk, narrow_peer(peer), tag, &request, &slot.error));
}

Outcome Client::irecv(const DLTensor& chunk, int64_t peer, int64_t tag, tessera_transport_request& request) {
  ErrorSlot slot;
  return slot.outcome(table_.irecv(table_.context, &chunk, narrow_peer(peer), tag, &request, &slot.error));
}

Outcome Client::test(tessera_transport_request request, int32_t& done) {
  ErrorSlot slot;
  return slot.outcome(table_.test(table_.context, request, &done, &slot.error));
}

Outcome Client::wait(tessera_transport_request request, int64_t timeout_ms) {
  ErrorSlot slot;
  return slot.outcome(table_.wait(table_.context, request, timeout_ms, &slot.error));
}

Outcome Client::free_request(tessera_transport_request request) {
  ErrorSlot slot;
  return slot.outcome(table_.free_request(table_.context, request, &slot.error));
}

bool Client::has_allgather() const {
  return table_.struct_size >= offsetof(tessera_transport, allgather) + sizeof(void*) &&
         table_.allgather != nullptr;
}

Outcome Client::allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms) {
  ErrorSlot slot;
  return slot.outcome(table_.allgather(table_.context, send, bytes, recv, timeout_ms, &slot.error));
}

tessera_transport_request Client::send(const DLTensor& chunk, int peer, int64_t tag) {
  tessera_transport_request request = nullptr;
  expect_ok(isend(chunk, peer, tag, request),
            "isend to process " + std::to_string(peer) + " tag " + std::to_string(tag));
  return request;
}

tessera_transport_request Client::recv(const DLTensor& chunk, int peer, int64_t tag) {
  tessera_transport_request request = nullptr;
  expect_ok(irecv(chunk, peer, tag, request),
            "irecv from process " + std::to_string(peer) + " tag " + std::to_string(tag));
  return request;
}

void Client::finish(tessera_transport_request request, const std::string& what) {
  if (request == nullptr) return;
  expect_ok(wait(request, kPatienceMs), "wait for " + what);
  expect_ok(free_request(request), "free_request of " + what);
}

}  // namespace transport_test
