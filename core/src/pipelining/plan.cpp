// SchedulePlan: checking a plan's actions, adding its messages, printing it and costing it.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "pipelining/plan_rules.hpp"
#include "pipelining/simulation.hpp"
#include "tessera/errors.hpp"
#include "tessera/pipelining.hpp"

namespace tessera::pipelining {
namespace {

using detail::is_compute;
using detail::is_message;

// Every action names a stage of the plan held by the rank that lists it, and a micro-batch in range.
void check_places(const SchedulePlan& plan, const std::vector<std::vector<Action>>& actions) {
  for (size_t r = 0; r < actions.size(); ++r)
    for (const Action& a : actions[r]) {
      if (a.stage < 0 || a.stage >= plan.num_stages())
        throw Error(fmt::format("pipelining plan {}: rank {} lists {}, but the stages are 0..{}", plan.name(),
                                r, a.to_string(), plan.num_stages() - 1));
      if (a.microbatch < 0 || a.microbatch >= plan.n_microbatches())
        throw Error(fmt::format("pipelining plan {}: rank {} lists {}, but the micro-batches are 0..{}",
                                plan.name(), r, a.to_string(), plan.n_microbatches() - 1));
      if (plan.rank_of_stage(a.stage) != static_cast<int>(r))
        throw Error(fmt::format("pipelining plan {}: rank {} lists {}, but stage {} is on rank {}",
                                plan.name(), r, a.to_string(), a.stage, plan.rank_of_stage(a.stage)));
    }
}

// Every stage runs every micro-batch's forward once and its backward once: B, or I and W.
void check_complete(const SchedulePlan& plan, const std::vector<std::vector<Action>>& actions) {
  std::map<std::tuple<int, int, int>, int> count;
  for (const auto& rank : actions)
    for (const Action& a : rank)
      if (is_compute(a.type)) ++count[{a.stage, static_cast<int>(a.type), a.microbatch}];
  auto n = [&](int s, ActionType t, int mb) {
    const auto it = count.find({s, static_cast<int>(t), mb});
    return it == count.end() ? 0 : it->second;
  };
  for (int s = 0; s < plan.num_stages(); ++s)
    for (int mb = 0; mb < plan.n_microbatches(); ++mb) {
      const std::string where =
          fmt::format("pipelining plan {}: stage {} micro-batch {}", plan.name(), s, mb);
      if (n(s, ActionType::F, mb) != 1)
        throw Error(fmt::format("{} has {} forward(s) ({}); expected exactly one", where,
                                n(s, ActionType::F, mb), Action{s, ActionType::F, mb}.to_string()));
      const int b = n(s, ActionType::B, mb);
      const int i = n(s, ActionType::I, mb);
      const int w = n(s, ActionType::W, mb);
      if (!((b == 1 && i == 0 && w == 0) || (b == 0 && i == 1 && w == 1)))
        throw Error(fmt::format("{} has {} B, {} I and {} W; expected exactly one B, or one I and one W",
                                where, b, i, w));
    }
}

// Adds the messages between stages on different ranks as PyTorch's runtime does: ranks take turns
// in rank order, each scheduling its next compute action once what it needs is there; a send
// follows the action that makes what it sends, and its receive goes on the receiving rank then.
std::vector<std::vector<Action>> with_messages(const SchedulePlan& plan,
                                               const std::vector<std::vector<Action>>& compute) {
  const size_t ranks = compute.size();
  std::vector<std::deque<Action>> pending(ranks);
  for (size_t r = 0; r < ranks; ++r) pending[r].assign(compute[r].begin(), compute[r].end());
  std::vector<std::vector<Action>> out(ranks);
  std::vector<detail::Done> done(ranks);
  auto place = [&](size_t r, const Action& a) {
    out[r].push_back(a);
    done[r].add(a);
  };
  for (;;) {
    bool left = false;
    bool progress = false;
    for (size_t r = 0; r < ranks; ++r) {
      if (pending[r].empty()) continue;
      left = true;
      const Action a = pending[r].front();
      if (!detail::compute_waits_for(plan, a, done[r]).empty()) continue;
      place(r, a);
      const bool forward_message = a.type == ActionType::F && a.stage != plan.num_stages() - 1 &&
                                   plan.rank_of_stage(a.stage + 1) != static_cast<int>(r);
      const bool backward_message = detail::is_input_backward(a.type) && a.stage != 0 &&
                                    plan.rank_of_stage(a.stage - 1) != static_cast<int>(r);
      if (forward_message || backward_message) {
        const Action send{a.stage, forward_message ? ActionType::SEND_F : ActionType::SEND_B, a.microbatch};
        const Action receive = detail::matching_receive(send);
        place(r, send);
        place(static_cast<size_t>(plan.rank_of_stage(receive.stage)), receive);
      }
      pending[r].pop_front();
      progress = true;
    }
    if (!left) return out;
    if (!progress) {
      std::string stuck;
      for (size_t r = 0; r < ranks; ++r)
        if (!pending[r].empty())
          stuck += fmt::format("{}rank {} waits at {} for {}", stuck.empty() ? "" : "; ", r,
                               pending[r].front().to_string(),
                               detail::compute_waits_for(plan, pending[r].front(), done[r]));
      throw Error(fmt::format("pipelining plan {}: the compute order deadlocks: {}", plan.name(), stuck));
    }
  }
}

}  // namespace

SchedulePlan::SchedulePlan(std::string name, int n_microbatches, std::vector<int> stage_rank,
                           std::vector<std::vector<Action>> actions)
    : name_(std::move(name)), n_microbatches_(n_microbatches), stage_rank_(std::move(stage_rank)) {
  if (n_microbatches < 1)
    throw Error(
        fmt::format("pipelining plan {}: n_microbatches is {}; expected at least 1", name_, n_microbatches));
  if (actions.empty()) throw Error(fmt::format("pipelining plan {}: no ranks; expected at least one", name_));
  if (stage_rank_.empty())
    throw Error(fmt::format("pipelining plan {}: no stages; expected at least one", name_));
  for (size_t s = 0; s < stage_rank_.size(); ++s)
    if (stage_rank_[s] < 0 || stage_rank_[s] >= static_cast<int>(actions.size()))
      throw Error(fmt::format("pipelining plan {}: stage {} is placed on rank {}, but the ranks are 0..{}",
                              name_, s, stage_rank_[s], actions.size() - 1));
  check_places(*this, actions);
  check_complete(*this, actions);
  bool has_messages = false;
  for (const auto& rank : actions)
    for (const Action& a : rank) has_messages = has_messages || is_message(a.type);
  actions_ = has_messages ? std::move(actions) : with_messages(*this, actions);
  const detail::SimulationResult run = detail::simulate(*this, actions_, ActionCosts{});
  if (!run.problem.empty()) throw Error(fmt::format("pipelining plan {}: {}", name_, run.problem));
}

int SchedulePlan::rank_of_stage(int stage) const {
  if (stage < 0 || stage >= num_stages())
    throw Error(fmt::format("pipelining plan {}: stage {} does not exist; the stages are 0..{}", name_, stage,
                            num_stages() - 1));
  return stage_rank_[static_cast<size_t>(stage)];
}

std::vector<int> SchedulePlan::stages_of(int rank) const {
  std::vector<int> stages;
  for (int s = 0; s < num_stages(); ++s)
    if (stage_rank_[static_cast<size_t>(s)] == rank) stages.push_back(s);
  return stages;
}

const std::vector<Action>& SchedulePlan::actions(int rank) const {
  if (rank < 0 || rank >= num_ranks())
    throw Error(fmt::format("pipelining plan {}: rank {} does not exist; the ranks are 0..{}", name_, rank,
                            num_ranks() - 1));
  return actions_[static_cast<size_t>(rank)];
}

std::vector<Action> SchedulePlan::compute_actions(int rank) const {
  std::vector<Action> compute;
  for (const Action& a : actions(rank))
    if (is_compute(a.type)) compute.push_back(a);
  return compute;
}

std::string SchedulePlan::table() const {
  size_t steps = 0;
  for (const auto& rank : actions_) steps = std::max(steps, rank.size());
  const size_t digits = fmt::format("{}", steps == 0 ? 0 : steps - 1).size();
  auto step_label = [&](size_t i) { return fmt::format("Step {:0>{}}", i, digits); };
  std::vector<size_t> width(actions_.size(), 0);
  for (size_t r = 0; r < actions_.size(); ++r) {
    width[r] = step_label(0).size();
    for (const Action& a : actions_[r]) width[r] = std::max(width[r], a.to_string().size());
  }
  std::string out(step_label(0).size() + 2, ' ');
  for (size_t r = 0; r < actions_.size(); ++r)
    out += fmt::format("{}{:<{}}", r == 0 ? "" : " ", fmt::format("Rank {}", r), width[r]);
  for (size_t i = 0; i < steps; ++i) {
    out += fmt::format("\n{}: ", step_label(i));
    for (size_t r = 0; r < actions_.size(); ++r) {
      const std::string cell = i < actions_[r].size() ? actions_[r][i].to_string() : "";
      out += fmt::format("{}{:<{}}", r == 0 ? "" : " ", cell, width[r]);
    }
  }
  return out + "\n";
}

double SchedulePlan::step_time(const ActionCosts& costs) const {
  return detail::simulate(*this, actions_, costs).step_time;
}

double SchedulePlan::bubble_fraction(const ActionCosts& costs) const {
  const detail::SimulationResult run = detail::simulate(*this, actions_, costs);
  if (run.step_time <= 0) return 0.0;
  return 1.0 - run.busy_time / (static_cast<double>(num_ranks()) * run.step_time);
}

}  // namespace tessera::pipelining
