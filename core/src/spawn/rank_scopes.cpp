#include "spawn/rank_scopes.hpp"

#include <utility>

#include "autograd/grad_mode.hpp"
#include "ranks/local_mode_stack.hpp"
#include "tensor/program_generator.hpp"

namespace tessera::spawned {
namespace {
thread_local Scheduler* running_scheduler = nullptr;
}  // namespace

void RankScopes::exchange() {
  world::exchange_thread_bindings(bindings);
  detail::exchange_mode_stack(modes);
  autograd::exchange_grad_mode(grad_enabled);
  detail::exchange_program_generator(generator);
  dtensor::exchange_thread_modes(dtensor_modes);
  comm::exchange_labels(labels);
  std::swap(running_scheduler, scheduler);
}

Scheduler* scheduler_here() { return running_scheduler; }

}  // namespace tessera::spawned
