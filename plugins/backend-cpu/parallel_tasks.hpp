// Runs a kernel's independent tasks on a few threads spawned for that one call. Header-only, so a
// copy of this backend built from its source list (tests/dtensor) needs no new file.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tessera::cpu {

// Calls task(0) .. task(count - 1), each exactly once, on the calling thread and up to
// `threads - 1` others. Tasks are handed out in order from a shared counter, so which thread runs a
// task varies; a task's result must not depend on it. Nothing outlives the call: concurrent calls
// from several rank threads share no state. The first exception a task throws is rethrown here,
// after every thread has stopped.
template <class Task>
void run_tasks(int64_t count, int threads, const Task& task) {
  const int64_t helpers = std::min<int64_t>(threads, count) - 1;
  if (helpers <= 0) {
    for (int64_t i = 0; i < count; ++i) task(i);
    return;
  }
  std::atomic<int64_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto work = [&] {
    try {
      for (int64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) task(i);
    } catch (...) {
      next.store(count);  // the others stop after their current task
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> others;
  others.reserve(static_cast<size_t>(helpers));
  for (int64_t h = 0; h < helpers; ++h) {
    try {
      others.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had: the ones started (and this one) do all the tasks
    }
  }
  work();
  for (std::thread& t : others) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace tessera::cpu
