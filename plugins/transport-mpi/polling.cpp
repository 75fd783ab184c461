#include "polling.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace tessera::transport_mpi {
namespace {

constexpr int kYields = 16;
constexpr std::chrono::microseconds kLongestSleep{1000};

}  // namespace

void Backoff::pause() {
  if (yields_ < kYields) {
    ++yields_;
    sched_yield();
    return;
  }
  std::this_thread::sleep_for(sleep_);
  sleep_ = std::min(sleep_ * 2, kLongestSleep);
}

std::chrono::steady_clock::time_point deadline_after(int64_t timeout_ms) {
  const auto now = std::chrono::steady_clock::now();
  // steady_clock counts nanoseconds in 64 bits: about 292 years from its epoch. A timeout beyond a
  // year is "forever" for any run; clamping keeps now + timeout from overflowing.
  constexpr int64_t kYearMs = int64_t{365} * 24 * 3600 * 1000;
  return now + std::chrono::milliseconds(std::clamp<int64_t>(timeout_ms, 0, kYearMs));
}

}  // namespace tessera::transport_mpi
