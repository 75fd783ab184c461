// The DTensor layer's per-thread switches (ts::LossParallel, ts::ImplicitReplication) as a value:
// a rank's program (ts::spawn) carries its own while suspended, and the scheduler exchanges them with
// the thread's on every switch, so that a rank that waits inside such a scope does not lend it to
// the rank that runs next.
#pragma once

#include <utility>

namespace tessera::dtensor {

struct ThreadModes {
  bool loss_parallel = false;
  bool implicit_replication = false;
};

// The calling thread's switches, by address (fixed for the thread's life: the scheduler takes
// them once per thread and swaps through them at every switch).
struct ThreadModesAt {
  bool* loss_parallel = nullptr;         // ops_loss.cpp
  bool* implicit_replication = nullptr;  // ops_pointwise.cpp
};
bool& thread_loss_parallel();
bool& thread_implicit_replication();
inline ThreadModesAt thread_modes_at() { return {&thread_loss_parallel(), &thread_implicit_replication()}; }

inline void exchange_thread_modes(const ThreadModesAt& here, ThreadModes& other) {
  std::swap(*here.loss_parallel, other.loss_parallel);
  std::swap(*here.implicit_replication, other.implicit_replication);
}

}  // namespace tessera::dtensor
