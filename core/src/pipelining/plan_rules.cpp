#include "pipelining/plan_rules.hpp"

namespace tessera::pipelining::detail {

bool is_compute(ActionType type) {
  return type == ActionType::F || type == ActionType::I || type == ActionType::W || type == ActionType::B;
}
bool is_message(ActionType type) { return !is_compute(type); }
bool is_input_backward(ActionType type) { return type == ActionType::B || type == ActionType::I; }

std::string compute_waits_for(const SchedulePlan& plan, const Action& a, const Done& done) {
  const int s = a.stage;
  const int mb = a.microbatch;
  const int rank = plan.rank_of_stage(s);
  if (a.type == ActionType::F) {
    if (s == 0) return {};
    if (plan.rank_of_stage(s - 1) != rank)
      return done.has(s, ActionType::RECV_F, mb) ? std::string()
                                                 : Action{s, ActionType::RECV_F, mb}.to_string();
    return done.has(s - 1, ActionType::F, mb) ? std::string() : Action{s - 1, ActionType::F, mb}.to_string();
  }
  if (a.type == ActionType::W)
    return done.has(s, ActionType::I, mb) ? std::string() : Action{s, ActionType::I, mb}.to_string();
  // B or I: the stage's own forward, and the next stage's input gradient.
  if (!done.has(s, ActionType::F, mb)) return Action{s, ActionType::F, mb}.to_string();
  if (s == plan.num_stages() - 1) return {};
  if (plan.rank_of_stage(s + 1) != rank)
    return done.has(s, ActionType::RECV_B, mb) ? std::string()
                                               : Action{s, ActionType::RECV_B, mb}.to_string();
  return done.has_input_backward(s + 1, mb) ? std::string()
                                            : Action{s + 1, ActionType::B, mb}.to_string() + " or " +
                                                  Action{s + 1, ActionType::I, mb}.to_string();
}

Action matching_receive(const Action& send) {
  if (send.type == ActionType::SEND_F) return {send.stage + 1, ActionType::RECV_F, send.microbatch};
  return {send.stage - 1, ActionType::RECV_B, send.microbatch};
}

}  // namespace tessera::pipelining::detail
