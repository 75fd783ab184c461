// The orders of the single-stage schedules (PyTorch: ScheduleGPipe, Schedule1F1B): stage s on
// rank s, as PyTorch's runtime runs them.
#include <fmt/format.h>

#include <algorithm>

#include "tessera/errors.hpp"
#include "tessera/pipelining.hpp"

namespace tessera::pipelining {
namespace {

void require_sizes(const char* schedule, int num_stages, int n_microbatches) {
  if (num_stages < 1)
    throw Error(fmt::format("{}: num_stages is {}; expected at least 1", schedule, num_stages));
  if (n_microbatches < 1)
    throw Error(fmt::format("{}: n_microbatches is {}; expected at least 1", schedule, n_microbatches));
}

std::vector<int> stage_per_rank(int num_stages) {
  std::vector<int> rank(static_cast<size_t>(num_stages));
  for (int s = 0; s < num_stages; ++s) rank[static_cast<size_t>(s)] = s;
  return rank;
}

}  // namespace

SchedulePlan ScheduleGPipe::plan(int num_stages, int n_microbatches) {
  require_sizes("ScheduleGPipe", num_stages, n_microbatches);
  std::vector<std::vector<Action>> compute(static_cast<size_t>(num_stages));
  for (int s = 0; s < num_stages; ++s) {
    for (int mb = 0; mb < n_microbatches; ++mb)
      compute[static_cast<size_t>(s)].push_back({s, ActionType::F, mb});
    for (int mb = 0; mb < n_microbatches; ++mb)
      compute[static_cast<size_t>(s)].push_back({s, ActionType::B, mb});
  }
  return SchedulePlan("ScheduleGPipe", n_microbatches, stage_per_rank(num_stages), std::move(compute));
}

SchedulePlan Schedule1F1B::plan(int num_stages, int n_microbatches) {
  require_sizes("Schedule1F1B", num_stages, n_microbatches);
  if (n_microbatches < num_stages)
    throw Error(fmt::format("Schedule1F1B: n_microbatches ({}) must be at least the number of stages ({})",
                            n_microbatches, num_stages));
  std::vector<std::vector<Action>> compute(static_cast<size_t>(num_stages));
  for (int s = 0; s < num_stages; ++s) {
    std::vector<Action>& order = compute[static_cast<size_t>(s)];
    // The last stage warms up with one forward, each earlier stage with one more: enough that its
    // first backward's gradient is on its way when the warm-up ends.
    const int warmup = std::min(n_microbatches, num_stages - s);
    int forward = 0;
    for (; forward < warmup; ++forward) order.push_back({s, ActionType::F, forward});
    for (int backward = 0; backward < n_microbatches; ++backward) {
      order.push_back({s, ActionType::B, backward});
      if (forward < n_microbatches) order.push_back({s, ActionType::F, forward++});
    }
  }
  return SchedulePlan("Schedule1F1B", n_microbatches, stage_per_rank(num_stages), std::move(compute));
}

ScheduleGPipe::ScheduleGPipe(PipelineStage& stage, int n_microbatches, LossFn loss_fn)
    : PipelineScheduleSingle(stage, n_microbatches, std::move(loss_fn),
                             plan(stage.num_stages(), n_microbatches)) {}

Schedule1F1B::Schedule1F1B(PipelineStage& stage, int n_microbatches, LossFn loss_fn)
    : PipelineScheduleSingle(stage, n_microbatches, std::move(loss_fn),
                             plan(stage.num_stages(), n_microbatches)) {}

}  // namespace tessera::pipelining
