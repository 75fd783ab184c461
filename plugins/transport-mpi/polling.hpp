// Waiting for MPI requests without blocking in MPI: MPI_Wait has no timeout, so a timed wait is a
// loop of MPI_Test (which also drives MPI's progress engine) with a growing pause in between.
#pragma once

#include <chrono>
#include <cstdint>

namespace tessera::transport_mpi {

// The pause between two polls: first a few sched_yield (a message from a process on the same node
// is often microseconds away), then sleeps doubling from 1 us up to 1 ms, so a long wait costs
// little CPU while a short one is not slowed down by a sleep's granularity.
class Backoff {
 public:
  void pause();

 private:
  int yields_ = 0;
  std::chrono::microseconds sleep_{1};
};

// The point in time `timeout_ms` from now, saturating instead of overflowing for huge timeouts.
std::chrono::steady_clock::time_point deadline_after(int64_t timeout_ms);

// Calls `done()` until it returns true (then returns true) or until `timeout_ms` has passed (then
// returns false). `done` is called at least once, and once more after the deadline, so a timeout
// of 0 is a single poll. Whatever `done` throws propagates.
template <class Done>
bool poll_until(int64_t timeout_ms, Done&& done) {
  const auto deadline = deadline_after(timeout_ms);
  Backoff backoff;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    backoff.pause();
  }
}

}  // namespace tessera::transport_mpi
