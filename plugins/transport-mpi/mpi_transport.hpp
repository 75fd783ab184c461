// The "mpi" transport (transport.h): point-to-point chunks with MPI_Isend/MPI_Irecv on a private
// communicator, timed waits by polling MPI_Test, and an all-gather by MPI_Iallgather. Plugged into
// the C table by sdk::TransportBuilder, which turns what this throws into statuses.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "allgather.hpp"
#include "message.hpp"
#include "tessera/sdk/cpp/transport_builder.hpp"

namespace tessera::transport_mpi {

// 1 GiB: a part's byte count must fit MPI's int count (INT_MAX, 2 GiB - 1); staying at half of it
// keeps clear of implementations whose internal byte arithmetic near INT_MAX has overflowed.
inline constexpr size_t kMaxPartBytes = size_t{1} << 30;

class MpiTransport {
 public:
  // `max_part_bytes` (1 .. INT_MAX) is how a chunk is cut into MPI messages (message.hpp); the
  // plugin uses kMaxPartBytes, tests a small value to exercise the cutting.
  explicit MpiTransport(size_t max_part_bytes = kMaxPartBytes) : max_part_bytes_(max_part_bytes) {}

  // Where init reads the link costs it reports (SDK 1.5: seconds per message, bytes per second
  // between processes; 0 = unknown): the plugin's parameters "latency" and "bandwidth". MPI itself
  // does not tell them, so without this (or with 0) init reports them unknown and the world is
  // costed on its [topology] preset alone.
  void link_costs_from(std::function<double()> latency, std::function<double()> bandwidth) {
    latency_ = std::move(latency);
    bandwidth_ = std::move(bandwidth);
  }

  sdk::TransportWorld init(const tessera_transport_config& config);
  void finalize();
  tessera_transport_request isend(const DLTensor& chunk, int32_t peer, int64_t tag);
  tessera_transport_request irecv(const DLTensor& chunk, int32_t peer, int64_t tag);
  bool test(tessera_transport_request request);
  // Returns true when completed; a timeout fails with TESSERA_TIMEOUT and a message naming the
  // request (the builder's own timeout message could not say which one).
  bool wait(tessera_transport_request request, int64_t timeout_ms);
  void free_request(tessera_transport_request request);
  bool allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms);
  // After a failure, in place of finalize: MPI_Abort ends every process of the job with
  // `exit_code` (MPI_Finalize could wait forever for a stalled peer).
  [[noreturn]] void abort(int32_t exit_code);

 private:
  tessera_transport_request post(Direction direction, const DLTensor& chunk, int32_t peer, int64_t tag);
  void require_initialised(const char* call) const;
  Message& message(tessera_transport_request request, const char* call) const;
  // Runs MPI_Comm_dup and the queries of init; on failure undoes what init did.
  sdk::TransportWorld join_world();
  // Gives gathers abandoned by a timeout until `grace_ms` to complete; returns how many are left.
  size_t settle_abandoned(int64_t grace_ms);

  size_t max_part_bytes_;
  std::function<double()> latency_;    // empty: unknown
  std::function<double()> bandwidth_;  // empty: unknown
  MPI_Comm comm_ = MPI_COMM_NULL;      // private: Tessera's tags never meet the program's own messages
  bool initialised_mpi_ = false;       // this plugin called MPI_Init_thread, so it calls MPI_Finalize
  int index_ = 0;
  int count_ = 1;
  int64_t max_tag_ = 32767;
  int64_t world_timeout_ms_ = 0;
  std::vector<std::unique_ptr<Allgather>> abandoned_;  // timed out, still pending in MPI
  // Messages freed cleanly, kept for the next isend/irecv (a collective posts them on every call).
  std::vector<std::unique_ptr<Message>> spare_;
};

}  // namespace tessera::transport_mpi
