// The host's side of a transport table, as the tests drive it: each call gets a fresh
// tessera_error and comes back as an Outcome.
#pragma once

#include <cstddef>
#include <cstdint>

#include "checks.hpp"
#include "tessera/sdk/transport.h"

namespace transport_test {

// The world as the test knows it independently of the transport (mpirun's environment and the
// process count passed on the command line), plus max_tag, which only the transport can say.
struct World {
  int index = 0;
  int count = 1;
  int64_t max_tag = 0;
  int left() const { return (index + count - 1) % count; }  // receives come from here
  int right() const { return (index + 1) % count; }         // sends go here
};

// This process's index from mpirun's environment (OMPI_COMM_WORLD_RANK), or -1 when absent.
int launcher_rank();

// The world a test program starts in: its index from mpirun, the count from its command line
// (`count_argument`); failure lines name the process from here on. Records a failure when the
// program was not started by mpirun.
World launched_world(const char* count_argument);

class Client {
 public:
  explicit Client(const tessera_transport& table) : table_(table) {}

  Outcome init(int64_t timeout_ms, tessera_transport_info& info);
  Outcome finalize();
  Outcome isend(const DLTensor& chunk, int64_t peer, int64_t tag, tessera_transport_request& request);
  Outcome irecv(const DLTensor& chunk, int64_t peer, int64_t tag, tessera_transport_request& request);
  Outcome test(tessera_transport_request request, int32_t& done);
  Outcome wait(tessera_transport_request request, int64_t timeout_ms);
  Outcome free_request(tessera_transport_request request);
  bool has_allgather() const;
  Outcome allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms);

  // Posts, and records a failure (returning NULL) when posting failed.
  tessera_transport_request send(const DLTensor& chunk, int peer, int64_t tag);
  tessera_transport_request recv(const DLTensor& chunk, int peer, int64_t tag);
  // Waits (kPatienceMs) and frees; records failures. Ignores a NULL request.
  void finish(tessera_transport_request request, const std::string& what);

  // Long enough for any message of the tests, short enough that a lost one fails within the
  // ctest timeout.
  static constexpr int64_t kPatienceMs = 10000;

 private:
  const tessera_transport& table_;
};

}  // namespace transport_test
