// The DTensor layer's per-thread switches (ts::LossParallel, ts::ImplicitReplication) as a value:
// a rank's program (ts::spawn) carries its own while suspended, and the scheduler exchanges them with
// the thread's on every switch, so that a rank that waits inside such a scope does not lend it to
// the rank that runs next.
#pragma once

namespace tessera::dtensor {

struct ThreadModes {
  bool loss_parallel = false;
  bool implicit_replication = false;
};

void exchange_loss_parallel(bool& other);         // ops_loss.cpp
void exchange_implicit_replication(bool& other);  // ops_pointwise.cpp

inline void exchange_thread_modes(ThreadModes& other) {
  exchange_loss_parallel(other.loss_parallel);
  exchange_implicit_replication(other.implicit_replication);
}

}  // namespace tessera::dtensor
