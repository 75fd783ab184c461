#include "pipelining/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "pipelining/plan_rules.hpp"

namespace tessera::pipelining::detail {
namespace {

using MessageKey = std::tuple<int, int, int>;  // the receive that takes it: stage, type, micro-batch

MessageKey key_of(const Action& receive) {
  return {receive.stage, static_cast<int>(receive.type), receive.microbatch};
}

double cost_of(const Action& a, const ActionCosts& costs) {
  switch (a.type) {
    case ActionType::F:
      return costs.forward;
    case ActionType::I:
      return costs.backward_input;
    case ActionType::W:
      return costs.backward_weight;
    case ActionType::B:
      return costs.backward_input + costs.backward_weight;
    default:
      return 0.0;
  }
}

// The computation a send sends the result of.
Action produced_by(const Action& send) {
  return {send.stage, send.type == ActionType::SEND_F ? ActionType::F : ActionType::B, send.microbatch};
}

}  // namespace

SimulationResult simulate(const SchedulePlan& plan, const std::vector<std::vector<Action>>& actions,
                          const ActionCosts& costs) {
  const size_t ranks = actions.size();
  std::vector<size_t> next(ranks, 0);
  std::vector<double> clock(ranks, 0.0);
  std::vector<Done> done(ranks);
  std::vector<std::multimap<MessageKey, double>> inbox(ranks);  // arrival times
  std::vector<std::map<MessageKey, double>> arrived(ranks);     // of the receives done
  SimulationResult result;
  result.timeline.resize(ranks);

  // Why rank r cannot run its next action now; empty when it can.
  auto waits_for = [&](size_t r, const Action& a) -> std::string {
    if (is_compute(a.type)) return compute_waits_for(plan, a, done[r]);
    if (a.type == ActionType::SEND_F || a.type == ActionType::SEND_B) {
      const Action source = produced_by(a);
      if (a.type == ActionType::SEND_B ? done[r].has_input_backward(a.stage, a.microbatch)
                                       : done[r].has(source.stage, source.type, source.microbatch))
        return {};
      return fmt::format("{} (what it sends)", source.to_string());
    }
    if (inbox[r].count(key_of(a)) != 0) return {};
    const int from = plan.rank_of_stage(a.type == ActionType::RECV_F ? a.stage - 1 : a.stage + 1);
    return fmt::format("a message from rank {}", from);
  };

  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t r = 0; r < ranks; ++r) {
      while (next[r] < actions[r].size()) {
        const Action& a = actions[r][next[r]];
        if (!waits_for(r, a).empty()) break;
        if (a.type == ActionType::SEND_F || a.type == ActionType::SEND_B) {
          const Action receive = matching_receive(a);
          inbox[static_cast<size_t>(plan.rank_of_stage(receive.stage))].emplace(key_of(receive),
                                                                                clock[r] + costs.message);
        } else if (a.type == ActionType::RECV_F || a.type == ActionType::RECV_B) {
          // Posted here, waited for by the action that uses it (as PyTorch's runtime posts a
          // receive early and waits before the compute that needs it).
          const auto it = inbox[r].find(key_of(a));
          arrived[r][key_of(a)] = it->second;
          inbox[r].erase(it);
        } else {
          double start = clock[r];
          const ActionType needs = a.type == ActionType::F ? ActionType::RECV_F : ActionType::RECV_B;
          if (a.type != ActionType::W)
            if (const auto it = arrived[r].find(key_of({a.stage, needs, a.microbatch}));
                it != arrived[r].end())
              start = std::max(start, it->second);
          clock[r] = start + cost_of(a, costs);
          result.busy_time += cost_of(a, costs);
          result.timeline[r].push_back({a, start, clock[r]});
        }
        done[r].add(a);
        ++next[r];
        progress = true;
      }
    }
  }

  std::string stuck;
  for (size_t r = 0; r < ranks; ++r)
    if (next[r] < actions[r].size()) {
      const Action& a = actions[r][next[r]];
      stuck += fmt::format("{}rank {} waits at {} (action {} of {}) for {}", stuck.empty() ? "" : "; ", r,
                           a.to_string(), next[r] + 1, actions[r].size(), waits_for(r, a));
    }
  if (!stuck.empty()) {
    result.problem = fmt::format("it deadlocks: {}", stuck);
    return result;
  }
  std::string left;
  for (size_t r = 0; r < ranks; ++r)
    for (const auto& [key, arrival] : inbox[r]) {
      const auto [stage, type, microbatch] = key;
      left +=
          fmt::format("{}rank {} is sent a message for {} but has no such receive", left.empty() ? "" : "; ",
                      r, Action{stage, static_cast<ActionType>(type), microbatch}.to_string());
    }
  if (!left.empty()) {
    result.problem = fmt::format("messages are left over: {}", left);
    return result;
  }
  result.step_time = *std::max_element(clock.begin(), clock.end());
  return result;
}

}  // namespace tessera::pipelining::detail
