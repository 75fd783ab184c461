// What a rank's program keeps per thread, carried by its coroutine while it is suspended.
//
// The ranks of a spawn share one thread, and the core keeps scopes per thread: the worlds bound and
// the running program (world), LocalMode scopes (ranks), grad mode (autograd), the random generator
// factories draw from (tensor), the LossParallel and ImplicitReplication switches (dtensor),
// CommLabel labels (comm). A rank that waits inside such a scope
// must not lend it to the rank that runs next, so the scheduler exchanges the thread's scopes with
// the rank's own on every switch, in and out.
#pragma once

#include <vector>

#include "comm/labels.hpp"
#include "dtensor/thread_modes.hpp"
#include "tessera/generator.hpp"
#include "world/world.hpp"

namespace tessera {
class LocalMode;
}

namespace tessera::spawned {

class Scheduler;

struct RankScopes {
  world::ThreadBindings bindings;
  std::vector<LocalMode*> modes;
  bool grad_enabled = true;
  Generator* generator = nullptr;  // null: the process's default generator
  dtensor::ThreadModes dtensor_modes;
  comm::ThreadLabels labels;
  Scheduler* scheduler = nullptr;  // the spawn whose rank runs (null: none)

  // Swaps every scope with the calling thread's: once to run as the rank, once to stop.
  void exchange();
};

// The scheduler whose rank's program the calling thread runs, or null.
Scheduler* scheduler_here();

}  // namespace tessera::spawned
