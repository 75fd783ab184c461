// What the actions of a schedule plan depend on, shared by the plan's check, the placement of its
// messages and the cost model, so that all three agree on when an action may run.
#pragma once

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/pipelining.hpp"

namespace tessera::pipelining::detail {

bool is_compute(ActionType type);
bool is_message(ActionType type);
// B and I hand the input gradient on; both count as "the backward" a previous stage waits for.
bool is_input_backward(ActionType type);

// What one rank has done so far: actions by (stage, type, micro-batch).
class Done {
 public:
  void add(const Action& a) { done_.insert(key(a)); }
  bool has(int stage, ActionType type, int microbatch) const {
    return done_.count({stage, static_cast<int>(type), microbatch}) != 0;
  }
  bool has_input_backward(int stage, int microbatch) const {
    return has(stage, ActionType::B, microbatch) || has(stage, ActionType::I, microbatch);
  }

 private:
  static std::tuple<int, int, int> key(const Action& a) {
    return {a.stage, static_cast<int>(a.type), a.microbatch};
  }
  std::set<std::tuple<int, int, int>> done_;
};

// Why compute action `a` on its rank cannot run yet given what the rank has done (which includes
// its completed receives); empty when it can. Every input comes from a receive when the stage it
// comes from is on another rank, from the rank's own earlier action otherwise.
std::string compute_waits_for(const SchedulePlan& plan, const Action& a, const Done& done);

// The receive that the send `a` is matched by, as an action of the receiving stage.
Action matching_receive(const Action& send);

}  // namespace tessera::pipelining::detail
