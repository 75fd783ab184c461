// Pipeline parallelism (PyTorch: torch.distributed.pipelining) inside per-rank programs (ts::spawn).
//
//   ts::spawn(2, [&](int rank) {
//     ts::nn::Sequential chunk = rank == 0 ? first_half : second_half;  // this rank's layers
//     ts::pipelining::PipelineStage stage(chunk, /*stage_index=*/rank, /*num_stages=*/2);
//     ts::pipelining::Schedule1F1B schedule(stage, /*n_microbatches=*/4, loss_fn);
//     std::vector<ts::Tensor> losses;
//     if (rank == 0) schedule.step(x);                   // the first stage feeds the batch
//     else schedule.step({}, target, &losses);           // the last computes the losses
//   });
//
// A schedule is data: actions(rank) lists what each rank does, in PyTorch's spelling ("0F1" is
// stage 0's forward of micro-batch 1; B a full backward, I and W its input and weight halves;
// "1RECV_F0", "0SEND_B2" the messages between stages). Every plan is checked when it is made: its
// actions are simulated (sends buffered, receives waiting) and a plan that would deadlock, leave a
// message unreceived or miss a micro-batch's forward or backward is an Error naming the ranks and
// actions. table() prints it in PyTorch's grid; the cost model gives its step time and bubble
// fraction.
//
// step() splits the batch (and the target) into n_microbatches chunks along dim 0 (the first
// batch % n chunks one row longer, as torch.tensor_split), runs this rank's actions, and leaves in
// every parameter's grad the sum over micro-batches of the loss gradients, accumulated in
// micro-batch order and then scaled by 1/n_microbatches (PyTorch's default; the scaling applies to
// the whole grad, so zero the grads between steps). Activations travel with
// dist::functional::send/recv (a tag per receiving stage and micro-batch; with full backwards the
// gradients travel in their own space, with split ones under the negative tags), so the spawn's
// deadlock report covers a step too, and a step's messages share the user's tags: do not leave
// messages of your own in flight between the pipeline's ranks during a step.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessera/nn/module.hpp"
#include "tessera/nn/value.hpp"
#include "tessera/process_group.hpp"
#include "tessera/tensor.hpp"

namespace tessera::pipelining {

enum class ActionType { F, I, W, B, SEND_F, RECV_F, SEND_B, RECV_B };

// One step of a rank: stage `stage` does `type` for micro-batch `microbatch`.
struct Action {
  int stage = 0;
  ActionType type = ActionType::F;
  int microbatch = 0;

  std::string to_string() const;  // "0F1", "1SEND_F0" (PyTorch's form)
  // The reverse of to_string; anything else is an Error quoting the text.
  static Action parse(std::string_view text);
  bool operator==(const Action&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Action& action);

// What each action costs in the cost model, in any time unit; stages are uniform. A full backward
// (B) costs backward_input + backward_weight.
struct ActionCosts {
  double forward = 1.0;
  double backward_input = 1.0;
  double backward_weight = 1.0;
  double message = 0.0;  // from a send to the matching receive's completion
};

// A compute action placed in time by the cost model.
struct TimedAction {
  Action action;
  double start = 0;
  double end = 0;
};

// A schedule as data: each rank's actions for n_microbatches micro-batches through num_stages
// stages, stage s held by rank stage_rank[s].
class SchedulePlan {
 public:
  // `actions[r]` is rank r's order. When no list holds a message action (SEND_/RECV_), the
  // messages are added as PyTorch's runtime adds them: a send right after the action that makes
  // what it sends, its receive placed on the receiving rank when the sender sends. Then the plan is
  // checked (see above); an invalid one is an Error.
  SchedulePlan(std::string name, int n_microbatches, std::vector<int> stage_rank,
               std::vector<std::vector<Action>> actions);

  const std::string& name() const { return name_; }
  int num_ranks() const { return static_cast<int>(actions_.size()); }
  int num_stages() const { return static_cast<int>(stage_rank_.size()); }
  int n_microbatches() const { return n_microbatches_; }
  int rank_of_stage(int stage) const;
  // The stages rank `rank` holds, ascending.
  std::vector<int> stages_of(int rank) const;

  const std::vector<Action>& actions(int rank) const;   // with messages
  std::vector<Action> compute_actions(int rank) const;  // F, I, W and B only

  // Steps down, ranks across, as PyTorch's _format_pipeline_order prints a pipeline order.
  std::string table() const;

  // The cost model: each rank runs its actions in order, an action starting when the rank is free
  // and what it needs has arrived.
  double step_time(const ActionCosts& costs = {}) const;
  // The share of rank-time spent idle within step_time: 1 - busy / (ranks * step_time).
  double bubble_fraction(const ActionCosts& costs = {}) const;
  // Each rank's compute actions (F, I, W, B) in the order it runs them, with when each starts and
  // ends under the cost model; the gaps between them are the rank's bubbles.
  std::vector<std::vector<TimedAction>> timeline(const ActionCosts& costs = {}) const;
  // The most micro-batches whose activations stage `stage` holds at once, following its rank's
  // order: a micro-batch's activations are held from its forward until the last part of its
  // backward (B, or W after I). Multiply by one micro-batch's activation bytes for the stage's peak
  // activation memory. Throws Error for a stage out of range.
  int peak_activations(int stage) const;
  // Writes the timeline as a Chrome/Perfetto trace (open it at https://ui.perfetto.dev): one track
  // per rank, a slice per compute action named as to_string() prints it, and a "bubble" slice for
  // every idle stretch of a rank before the step ends. Costs are read as seconds. Throws Error when
  // the file cannot be written.
  void write_trace(const std::string& path, const ActionCosts& costs = {}) const;

 private:
  std::string name_;
  int n_microbatches_;
  std::vector<int> stage_rank_;
  std::vector<std::vector<Action>> actions_;
};

// A loss from a last stage's output and the target micro-batch.
using LossFn = std::function<Tensor(const Tensor& output, const Tensor& target)>;

// One stage of the pipeline on the calling rank: a module chunk (anything with
// forward(const nn::Value&): usually a Sequential) and its place in the pipeline. The group is the
// pipeline's ranks: stage-holding rank r of a plan is group rank r (default: the whole world).
class PipelineStage {
 public:
  using Forward = std::function<nn::Value(const nn::Value&)>;

  PipelineStage(std::shared_ptr<nn::Module> module, Forward forward, int stage_index, int num_stages,
                ProcessGroup group = {});
  template <class Holder>
  requires requires(const Holder& h) { h.ptr()->forward(nn::Value()); }
  PipelineStage(const Holder& module, int stage_index, int num_stages, ProcessGroup group = {})
      : PipelineStage(
            module.ptr(), [impl = module.ptr()](const nn::Value& x) { return nn::Value(impl->forward(x)); },
            stage_index, num_stages, std::move(group)) {}

  int stage_index() const { return stage_index_; }
  int num_stages() const { return num_stages_; }
  bool is_first() const { return stage_index_ == 0; }
  bool is_last() const { return stage_index_ == num_stages_ - 1; }
  nn::Module& module() const { return *module_; }
  const ProcessGroup& group() const { return group_; }
  Tensor forward(const Tensor& x) const;

 private:
  std::shared_ptr<nn::Module> module_;
  Forward forward_;
  int stage_index_;
  int num_stages_;
  ProcessGroup group_;
};

// Runs a plan's actions for the stages the calling rank holds (pipelining/step.cpp).
Tensor run_step(const SchedulePlan& plan, const std::vector<const PipelineStage*>& stages,
                const LossFn& loss_fn, const Tensor& x, const Tensor& target, std::vector<Tensor>* losses);

// A schedule of one stage per rank, run by step() on each rank's own stage.
class PipelineScheduleSingle {
 public:
  const SchedulePlan& plan() const { return plan_; }
  const std::vector<Action>& actions(int rank) const { return plan_.actions(rank); }
  std::string table() const { return plan_.table(); }
  double bubble_fraction(const ActionCosts& costs = {}) const { return plan_.bubble_fraction(costs); }

  // On the rank holding the first stage: step(x). On the one holding the last stage:
  // step({}, target, &losses) appends each micro-batch's loss in order and returns the outputs
  // joined along dim 0. Elsewhere: step(), which returns an undefined tensor.
  Tensor step(const Tensor& x = {}, const Tensor& target = {}, std::vector<Tensor>* losses = nullptr) {
    return run_step(plan_, {stage_}, loss_fn_, x, target, losses);
  }

 protected:
  PipelineScheduleSingle(PipelineStage& stage, LossFn loss_fn, SchedulePlan plan);

 private:
  PipelineStage* stage_;
  LossFn loss_fn_;
  SchedulePlan plan_;
};

// A schedule of several stages per rank: each rank passes the stages it holds.
class PipelineScheduleMulti {
 public:
  const SchedulePlan& plan() const { return plan_; }
  const std::vector<Action>& actions(int rank) const { return plan_.actions(rank); }
  std::string table() const { return plan_.table(); }
  double bubble_fraction(const ActionCosts& costs = {}) const { return plan_.bubble_fraction(costs); }
  // As PipelineScheduleSingle::step, for every stage this rank holds.
  Tensor step(const Tensor& x = {}, const Tensor& target = {}, std::vector<Tensor>* losses = nullptr);

 protected:
  PipelineScheduleMulti(std::vector<PipelineStage> stages, LossFn loss_fn, SchedulePlan plan);

 private:
  std::vector<PipelineStage> stages_;
  LossFn loss_fn_;
  SchedulePlan plan_;
};

// All forwards, then all backwards (PyTorch: ScheduleGPipe). Stage s on rank s.
class ScheduleGPipe : public PipelineScheduleSingle {
 public:
  ScheduleGPipe(PipelineStage& stage, int n_microbatches, LossFn loss_fn = {});
  static SchedulePlan plan(int num_stages, int n_microbatches);
};

// Stage s warms up with num_stages - s forwards, then alternates one backward and one forward
// (PyTorch: Schedule1F1B). Needs n_microbatches >= num_stages, as PyTorch does.
class Schedule1F1B : public PipelineScheduleSingle {
 public:
  Schedule1F1B(PipelineStage& stage, int n_microbatches, LossFn loss_fn = {});
  static SchedulePlan plan(int num_stages, int n_microbatches);
};

// Interleaved 1F1B (PyTorch: ScheduleInterleaved1F1B): each rank holds stages_per_rank stages in a
// loop (stage s on rank s % num_ranks); micro-batches go round in rounds of
// n_microbatches / max(1, n_microbatches / num_ranks), which must divide n_microbatches.
class ScheduleInterleaved1F1B : public PipelineScheduleMulti {
 public:
  ScheduleInterleaved1F1B(const std::vector<PipelineStage>& stages, int n_microbatches, LossFn loss_fn = {});
  static SchedulePlan plan(int num_ranks, int stages_per_rank, int n_microbatches);
};

// Interleaved zero bubble (PyTorch: ScheduleInterleavedZeroBubble, the ZB1P schedule): the
// interleaved order with each backward split into I (input gradient, sent on at once) and W
// (weight gradient, run later to fill the bubbles).
class ScheduleInterleavedZeroBubble : public PipelineScheduleMulti {
 public:
  ScheduleInterleavedZeroBubble(const std::vector<PipelineStage>& stages, int n_microbatches,
                                LossFn loss_fn = {});
  static SchedulePlan plan(int num_ranks, int stages_per_rank, int n_microbatches);
};

// Zero bubble in a V (PyTorch: ScheduleZBVZeroBubble): two stages per rank, stage s on rank s on
// the way down and stage 2p-1-s on the way back up, so that the first and last stages share rank
// 0; backwards split into I and W.
class ScheduleZBVZeroBubble : public PipelineScheduleMulti {
 public:
  ScheduleZBVZeroBubble(const std::vector<PipelineStage>& stages, int n_microbatches, LossFn loss_fn = {});
  static SchedulePlan plan(int num_ranks, int n_microbatches);
};

}  // namespace tessera::pipelining
