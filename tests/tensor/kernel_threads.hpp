// Every backend's kernel thread count for one scope (0: the CPUs this process may run on), then
// back to the default. The host sets the same count (1) while ranks run in parallel.
#pragma once

#include "dispatch/backends.hpp"

namespace test {

class KernelThreads {
 public:
  explicit KernelThreads(int count) { tessera::dispatch::set_backend_threads(count); }
  ~KernelThreads() { tessera::dispatch::set_backend_threads(0); }
  KernelThreads(const KernelThreads&) = delete;
  KernelThreads& operator=(const KernelThreads&) = delete;
};

}  // namespace test
