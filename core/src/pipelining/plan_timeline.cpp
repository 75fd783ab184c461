// A plan in time: each rank's compute actions as the cost model places them, the activations each
// stage holds at its peak, and the timeline written as a trace with its bubbles drawn.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "pipelining/simulation.hpp"
#include "tessera/errors.hpp"
#include "tessera/pipelining.hpp"

namespace tessera::pipelining {
namespace {

// Trace categories colour the slices apart in Perfetto: forwards, backwards and idle time.
const char* category_of(ActionType type) {
  switch (type) {
    case ActionType::F:
      return "forward";
    case ActionType::I:
      return "backward_input";
    case ActionType::W:
      return "backward_weight";
    default:
      return "backward";
  }
}

nlohmann::json slice(int rank, const std::string& name, const char* category, double start, double end) {
  constexpr double kMicroseconds = 1e6;  // trace times are in microseconds; costs in seconds
  return {{"name", name},
          {"cat", category},
          {"ph", "X"},
          {"pid", 0},
          {"tid", rank},
          {"ts", start * kMicroseconds},
          {"dur", (end - start) * kMicroseconds}};
}

}  // namespace

std::vector<std::vector<TimedAction>> SchedulePlan::timeline(const ActionCosts& costs) const {
  // A plan is simulated when it is made, so it always runs to its end here.
  return detail::simulate(*this, actions_, costs).timeline;
}

int SchedulePlan::peak_activations(int stage) const {
  if (stage < 0 || stage >= num_stages())
    throw Error(fmt::format("pipelining plan {}: peak_activations of stage {}; the stages are 0..{}", name_,
                            stage, num_stages() - 1));
  // Which backward action ends a micro-batch's activations: W where the backward is split.
  bool split = false;
  for (const Action& a : actions_[static_cast<size_t>(rank_of_stage(stage))])
    split = split || (a.stage == stage && a.type == ActionType::W);
  const ActionType last_part = split ? ActionType::W : ActionType::B;
  std::set<int> held;
  size_t peak = 0;
  for (const Action& a : actions_[static_cast<size_t>(rank_of_stage(stage))]) {
    if (a.stage != stage) continue;
    if (a.type == ActionType::F) held.insert(a.microbatch);
    if (a.type == last_part) held.erase(a.microbatch);
    peak = std::max(peak, held.size());
  }
  return static_cast<int>(peak);
}

void SchedulePlan::write_trace(const std::string& path, const ActionCosts& costs) const {
  const detail::SimulationResult run = detail::simulate(*this, actions_, costs);
  nlohmann::json events = nlohmann::json::array();
  events.push_back(
      {{"name", "process_name"},
       {"ph", "M"},
       {"pid", 0},
       {"args",
        {{"name", fmt::format("{} ({} stages, {} micro-batches)", name_, num_stages(), n_microbatches_)}}}});
  for (int r = 0; r < num_ranks(); ++r) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", r},
                      {"args", {{"name", fmt::format("rank {}", r)}}}});
    double free_at = 0;
    for (const TimedAction& t : run.timeline[static_cast<size_t>(r)]) {
      if (t.start > free_at) events.push_back(slice(r, "bubble", "bubble", free_at, t.start));
      events.push_back(slice(r, t.action.to_string(), category_of(t.action.type), t.start, t.end));
      free_at = t.end;
    }
    if (run.step_time > free_at) events.push_back(slice(r, "bubble", "bubble", free_at, run.step_time));
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out)
    throw Error(
        fmt::format("pipelining plan {}: cannot write the trace '{}' (missing directory or no permission); "
                    "give a writable path",
                    name_, path));
  out << nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump();
  if (!out.flush()) throw Error(fmt::format("pipelining plan {}: cannot write the trace '{}'", name_, path));
}

}  // namespace tessera::pipelining
