// Computes a simulated collective from its schedule's plan (schedule_plan.hpp) instead of replaying
// its messages: each plan node is one kernel call over its run of elements, in the plan's order,
// and each distinct output is assembled once and copied to the ranks that share it. The kernels and
// their operand order are the executor's, so results are bitwise those of a replay.
#pragma once

#include <vector>

#include "comm/schedule_plan.hpp"
#include "tessera/tensor.hpp"

namespace tessera::comm {

// inputs[r]: group rank r's input buffer, as execute() takes it, for every rank (all hosted here).
// Returns every rank's output buffer, as execute() would; elements the collective leaves
// unspecified are unspecified here too.
std::vector<Tensor> evaluate_plan(const SchedulePlan& plan, const std::vector<Tensor>& inputs);

}  // namespace tessera::comm
