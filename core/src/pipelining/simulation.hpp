// Runs a plan's actions as the ranks would, without data: sends are buffered at once, a receive
// waits for its message, a compute action waits for what it needs (plan_rules.hpp). Gives the time
// each rank finishes under a cost model, or what stops the plan: a deadlock or a message left over.
// In the cost model a receive is posted where the plan lists it and waited for by the compute action
// that uses what it receives.
#pragma once

#include <string>
#include <vector>

#include "tessera/pipelining.hpp"

namespace tessera::pipelining::detail {

struct SimulationResult {
  std::string problem;   // empty when every action ran and every message was received
  double step_time = 0;  // when the last rank finished
  double busy_time = 0;  // the compute actions' costs, summed over ranks
  std::vector<std::vector<TimedAction>> timeline;  // each rank's compute actions in the order run
};

SimulationResult simulate(const SchedulePlan& plan, const std::vector<std::vector<Action>>& actions,
                          const ActionCosts& costs);

}  // namespace tessera::pipelining::detail
