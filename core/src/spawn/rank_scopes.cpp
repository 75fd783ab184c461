#include "spawn/rank_scopes.hpp"

#include "autograd/grad_mode.hpp"
#include "ranks/local_mode_stack.hpp"
#include "tensor/program_generator.hpp"

namespace tessera::spawned {
namespace {
thread_local Scheduler* running_scheduler = nullptr;
}  // namespace

ThreadScopesAt ThreadScopesAt::of_calling_thread() {
  return {world::thread_bindings_at(),
          &detail::thread_mode_stack(),
          &autograd::thread_grad_mode(),
          &detail::thread_program_generator(),
          dtensor::thread_modes_at(),
          comm::thread_labels_at(),
          &running_scheduler};
}

Scheduler* scheduler_here() { return running_scheduler; }

}  // namespace tessera::spawned
