// The orders of the single-stage schedules (PyTorch: ScheduleGPipe, Schedule1F1B): stage s on
// rank s, as PyTorch's runtime runs them.
#include <fmt/format.h>

#include <algorithm>
#include <map>

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
    : PipelineScheduleSingle(stage, std::move(loss_fn), plan(stage.num_stages(), n_microbatches)) {}

Schedule1F1B::Schedule1F1B(PipelineStage& stage, int n_microbatches, LossFn loss_fn)
    : PipelineScheduleSingle(stage, std::move(loss_fn), plan(stage.num_stages(), n_microbatches)) {}

namespace {

// The interleaved orders (PyTorch's _get_1f1b_rank_ops): each rank holds stages_per_rank stages in
// a loop (stage s on rank s % num_ranks). With zero_bubble the backward is split: I (input
// gradient) where 1F1B has B, and each W (weight gradient) held back until rank-many
// forward-backward pairs have run, then issued in the order of the I's, one after each I.
SchedulePlan interleaved(const char* name, int num_ranks, int stages_per_rank, int n_microbatches,
                         bool zero_bubble) {
  require_sizes(name, num_ranks, n_microbatches);
  if (stages_per_rank < 1)
    throw Error(fmt::format("{}: stages_per_rank is {}; expected at least 1", name, stages_per_rank));
  const int p = num_ranks;
  const int v = stages_per_rank;
  const int m = n_microbatches;
  const int rounds = std::max(1, m / p);
  if (m % rounds != 0)
    throw Error(
        fmt::format("{}: n_microbatches ({}) must be a multiple of the number of rounds ({} = max(1, "
                    "n_microbatches / num_ranks))",
                    name, m, rounds));
  const int per_round = m / rounds;
  const ActionType backward = zero_bubble ? ActionType::I : ActionType::B;
  std::vector<std::vector<Action>> compute(static_cast<size_t>(p));
  for (int rank = 0; rank < p; ++rank) {
    // Forwards of the earlier local stages go first (depth first): the last stage's rank warms up
    // with (v - 1) rounds, each rank before it with one (zero bubble) or two forwards more.
    const int hop = zero_bubble ? 1 : 2;
    const int warmup = std::min((v - 1) * per_round + hop * (p - 1 - rank), m * v);
    const int steady = m * v - warmup;  // forward-backward pairs; then `warmup` backwards
    auto forward_stage = [&](int op) { return ((op / per_round) % v) * p + rank; };
    auto backward_stage = [&](int op) { return (v - 1 - ((op - warmup) / per_round) % v) * p + rank; };
    std::map<int, int> next_forward, next_backward, next_weight;  // per stage: its next micro-batch
    std::vector<int> backward_ops;                                // ops that issued a backward
    size_t weights = 0;
    std::vector<Action>& order = compute[static_cast<size_t>(rank)];
    auto issue_weight = [&] {
      const int s = backward_stage(backward_ops[weights++]);
      order.push_back({s, ActionType::W, next_weight[s]++});
    };
    for (int op = 0; op < warmup + steady + warmup; ++op) {
      if (op < warmup + steady) {
        const int s = forward_stage(op);
        order.push_back({s, ActionType::F, next_forward[s]++});
      }
      if (op >= warmup) {
        const int s = backward_stage(op);
        order.push_back({s, backward, next_backward[s]++});
        backward_ops.push_back(op);
        if (zero_bubble && op - warmup >= rank) issue_weight();
      }
    }
    while (zero_bubble && weights < backward_ops.size()) issue_weight();
  }
  std::vector<int> stage_rank(static_cast<size_t>(p * v));
  for (int s = 0; s < p * v; ++s) stage_rank[static_cast<size_t>(s)] = s % p;
  return SchedulePlan(name, m, std::move(stage_rank), std::move(compute));
}

}  // namespace

SchedulePlan ScheduleInterleaved1F1B::plan(int num_ranks, int stages_per_rank, int n_microbatches) {
  return interleaved("ScheduleInterleaved1F1B", num_ranks, stages_per_rank, n_microbatches, false);
}

SchedulePlan ScheduleInterleavedZeroBubble::plan(int num_ranks, int stages_per_rank, int n_microbatches) {
  return interleaved("ScheduleInterleavedZeroBubble", num_ranks, stages_per_rank, n_microbatches, true);
}

SchedulePlan ScheduleZBVZeroBubble::plan(int num_ranks, int n_microbatches) {
  const char* name = "ScheduleZBVZeroBubble";
  require_sizes(name, num_ranks, n_microbatches);
  const int p = num_ranks;
  const int m = n_microbatches;
  // The order is built for at least 2p - 1 micro-batches (enough to fill the V), then the actions
  // of micro-batches beyond m are dropped.
  const int built = std::max(2 * p - 1, m);
  std::vector<std::vector<Action>> compute(static_cast<size_t>(p));
  for (int rank = 0; rank < p; ++rank) {
    const int down = rank;               // this rank's stage on the way down the V
    const int up = 2 * p - 1 - rank;     // and on the way back up
    int f0 = 0, f1 = 0, b0 = 0, b1 = 0;  // forwards and input backwards issued, per side
    std::vector<Action> order;
    auto add = [&](int stage, ActionType type, int mb) { order.push_back({stage, type, mb}); };
    for (int i = 0; i < 2 * (p - rank) - 1; ++i) add(down, ActionType::F, f0++);
    for (int i = 0; i < rank; ++i) {
      add(up, ActionType::F, f1++);
      add(down, ActionType::F, f0++);
    }
    for (int i = 0; i < p - rank; ++i) {
      add(up, ActionType::F, f1++);
      add(up, ActionType::I, b1);
      add(up, ActionType::W, b1++);
    }
    while (f1 < f0 || f0 < built) {
      if (f0 < built) add(down, ActionType::F, f0++);
      add(down, ActionType::I, b0);
      add(down, ActionType::W, b0++);
      add(up, ActionType::F, f1++);
      add(up, ActionType::I, b1);
      add(up, ActionType::W, b1++);
    }
    int w0 = b0, w1 = b1;  // weight backwards issued, per side
    for (int i = 0; i < rank; ++i) {
      add(down, ActionType::I, b0++);
      add(up, ActionType::I, b1++);
    }
    for (int i = 0; i < p - rank; ++i) {
      add(down, ActionType::I, b0++);
      add(down, ActionType::W, w0++);
    }
    while (w1 < b1) add(up, ActionType::W, w1++);
    while (w0 < b0) add(down, ActionType::W, w0++);
    for (const Action& a : order)
      if (a.microbatch < m) compute[static_cast<size_t>(rank)].push_back(a);
  }
  std::vector<int> stage_rank(static_cast<size_t>(2 * p));
  for (int s = 0; s < 2 * p; ++s) stage_rank[static_cast<size_t>(s)] = s < p ? s : 2 * p - 1 - s;
  return SchedulePlan(name, m, std::move(stage_rank), std::move(compute));
}

namespace {

int ranks_of(const char* schedule, const std::vector<PipelineStage>& stages) {
  if (stages.empty()) throw Error(fmt::format("{}: no stages; pass the stages this rank holds", schedule));
  const int total = stages.front().num_stages();
  const int local = static_cast<int>(stages.size());
  if (total % local != 0)
    throw Error(
        fmt::format("{}: {} stage(s) in all cannot be shared out {} per rank", schedule, total, local));
  return total / local;
}

}  // namespace

ScheduleInterleaved1F1B::ScheduleInterleaved1F1B(const std::vector<PipelineStage>& stages, int n_microbatches,
                                                 LossFn loss_fn)
    : PipelineScheduleMulti(stages, std::move(loss_fn),
                            plan(ranks_of("ScheduleInterleaved1F1B", stages), static_cast<int>(stages.size()),
                                 n_microbatches)) {}

ScheduleInterleavedZeroBubble::ScheduleInterleavedZeroBubble(const std::vector<PipelineStage>& stages,
                                                             int n_microbatches, LossFn loss_fn)
    : PipelineScheduleMulti(stages, std::move(loss_fn),
                            plan(ranks_of("ScheduleInterleavedZeroBubble", stages),
                                 static_cast<int>(stages.size()), n_microbatches)) {}

namespace {

int zbv_ranks(const std::vector<PipelineStage>& stages) {
  if (stages.size() != 2)
    throw Error(fmt::format("ScheduleZBVZeroBubble: each rank holds exactly 2 stages, but this one passes {}",
                            stages.size()));
  return ranks_of("ScheduleZBVZeroBubble", stages);
}

}  // namespace

ScheduleZBVZeroBubble::ScheduleZBVZeroBubble(const std::vector<PipelineStage>& stages, int n_microbatches,
                                             LossFn loss_fn)
    : PipelineScheduleMulti(stages, std::move(loss_fn), plan(zbv_ranks(stages), n_microbatches)) {}

}  // namespace tessera::pipelining
