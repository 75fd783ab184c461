// What a rank's program keeps per thread, carried by its coroutine while it is suspended.
//
// The ranks of a spawn share one thread, and the core keeps scopes per thread: the worlds bound and
// the running program (world), LocalMode scopes (ranks), grad mode (autograd), the random generator
// factories draw from (tensor), the LossParallel and ImplicitReplication switches (dtensor),
// CommLabel labels (comm). A rank that waits inside such a scope
// must not lend it to the rank that runs next, so the scheduler exchanges the thread's scopes with
// the rank's own on every switch, in and out.
//
// The exchange goes through the addresses of the thread's variables (ThreadScopesAt), taken once
// when the spawn starts: every rank runs on the thread that called spawn, a thread-local variable's
// address is fixed for its thread's life, and in a shared object each lookup of one by name is a
// call, which at two exchanges per switch would cost more than the switch itself.
#pragma once

#include <utility>
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

// The calling thread's scopes, by address.
struct ThreadScopesAt {
  world::ThreadBindingsAt bindings;
  std::vector<LocalMode*>* modes = nullptr;
  bool* grad_enabled = nullptr;
  Generator** generator = nullptr;
  dtensor::ThreadModesAt dtensor_modes;
  comm::ThreadLabelsAt labels;
  Scheduler** scheduler = nullptr;

  static ThreadScopesAt of_calling_thread();
};

struct RankScopes {
  world::ThreadBindings bindings;
  std::vector<LocalMode*> modes;
  bool grad_enabled = true;
  Generator* generator = nullptr;  // null: the process's default generator
  dtensor::ThreadModes dtensor_modes;
  comm::ThreadLabels labels;
  Scheduler* scheduler = nullptr;  // the spawn whose rank runs (null: none)

  // Swaps every scope with the thread's at `here` (the calling thread's): once to run as the rank,
  // once to stop.
  void exchange(const ThreadScopesAt& here) {
    world::exchange_thread_bindings(here.bindings, bindings);
    here.modes->swap(modes);
    std::swap(*here.grad_enabled, grad_enabled);
    std::swap(*here.generator, generator);
    dtensor::exchange_thread_modes(here.dtensor_modes, dtensor_modes);
    comm::exchange_labels(here.labels, labels);
    std::swap(*here.scheduler, scheduler);
  }
};

// The scheduler whose rank's program the calling thread runs, or null.
Scheduler* scheduler_here();

}  // namespace tessera::spawned
