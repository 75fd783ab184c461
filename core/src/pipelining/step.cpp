// The step of every schedule: one rank runs its stages' actions for every micro-batch.
//
// Activations travel with dist::functional::send/recv, tagged with the receiving stage and the
// micro-batch; each
// one is preceded by a small header (dtype and shape) so that the receiver can make the tensor it
// receives into. The gradient half of a message needs no action of its own: a stage's backward
// (the token of its send) waits for the gradient, and the backward of what a stage received sends
// the gradient back, so RECV_B and SEND_B happen inside B. Split backwards work otherwise (see
// run_step).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "tessera/autograd.hpp"
#include "tessera/dist.hpp"
#include "tessera/dist_functional.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"
#include "tessera/pipelining.hpp"
#include "tessera/world.hpp"

namespace tessera::pipelining {
namespace {

constexpr int64_t kMaxDims = 8;

// The world rank of group rank `group_rank` in the calling rank's fibre of `group`.
int world_rank(const ProcessGroup& group, int group_rank) {
  if (group.is_default()) return group_rank;
  const int64_t me = get_rank().as_int();
  for (const std::vector<int>& fibre : group.fibres())
    for (int member : fibre)
      if (member == me) {
        if (group_rank >= static_cast<int>(fibre.size()))
          throw Error(fmt::format(
              "pipeline step on rank {}: the pipeline needs group rank {}, but its group {} has {} "
              "rank(s)",
              me, group_rank, group.to_string(), fibre.size()));
        return fibre[static_cast<size_t>(group_rank)];
      }
  throw Error(fmt::format("pipeline step on rank {}: the rank is not in the stage's group {}", me,
                          group.to_string()));
}

void send_header(const Tensor& t, int dst, int tag) {
  if (t.dim() > kMaxDims)
    throw Error(fmt::format("pipeline step: a stage output has {} dims; at most {} can travel between stages",
                            t.dim(), kMaxDims));
  std::vector<int64_t> header(2 + kMaxDims, 0);
  header[0] = static_cast<int64_t>(t.dtype());
  header[1] = t.dim();
  for (int64_t d = 0; d < t.dim(); ++d)
    header[static_cast<size_t>(2 + d)] = t.sizes()[static_cast<size_t>(d)];
  dist::send(from_values(header, {2 + kMaxDims}), dst, tag);
}

Tensor receive_like(int src, int tag) {
  Tensor header = zeros({2 + kMaxDims}, kInt64);
  dist::recv(header, src, tag);
  const std::vector<int64_t> h = header.to_vector<int64_t>();
  const Shape shape(h.begin() + 2, h.begin() + 2 + h[1]);
  return empty(SymShape(shape), TensorOptions(static_cast<DType>(h[0])));
}

// torch.tensor_split along dim 0: n chunks, the first (rows % n) one row longer.
std::vector<Tensor> split_rows(const Tensor& t, int n, const char* what) {
  if (t.dim() == 0 || t.sizes()[0] < n)
    throw Error(
        fmt::format("pipeline step: the {} has shape {}; it is split into {} micro-batches along dim 0, so "
                    "dim 0 must be at least {}",
                    what, t.shape().to_string(), n, n));
  const int64_t rows = t.sizes()[0];
  std::vector<Tensor> chunks;
  int64_t start = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t length = rows / n + (i < rows % n ? 1 : 0);
    chunks.push_back(t.narrow(0, start, length));
    start += length;
  }
  return chunks;
}

}  // namespace

namespace {

void require_loss(const SchedulePlan& plan, const LossFn& loss_fn) {
  if (!loss_fn)
    throw Error(
        fmt::format("{}: loss_fn is empty; a training step's backward starts from the loss (forward-only "
                    "schedules are not provided)",
                    plan.name()));
}

// What one stage keeps per micro-batch during a step.
struct MicroBatches {
  explicit MicroBatches(int n)
      : received(static_cast<size_t>(n)),
        outputs(static_cast<size_t>(n)),
        tokens(static_cast<size_t>(n)),
        losses(static_cast<size_t>(n)),
        used(static_cast<size_t>(n)),
        grad_out(static_cast<size_t>(n)),
        grad_in(static_cast<size_t>(n)) {}
  std::vector<Tensor> received, outputs, tokens, losses;
  // Split backwards (I, W) only: the input the forward used (cut from the previous stage's graph),
  // the output's gradient and the input's.
  std::vector<Tensor> used, grad_out, grad_in;
};

}  // namespace

PipelineScheduleSingle::PipelineScheduleSingle(PipelineStage& stage, LossFn loss_fn, SchedulePlan plan)
    : stage_(&stage), loss_fn_(std::move(loss_fn)), plan_(std::move(plan)) {
  require_loss(plan_, loss_fn_);
}

PipelineScheduleMulti::PipelineScheduleMulti(std::vector<PipelineStage> stages, LossFn loss_fn,
                                             SchedulePlan plan)
    : stages_(std::move(stages)), loss_fn_(std::move(loss_fn)), plan_(std::move(plan)) {
  require_loss(plan_, loss_fn_);
}

Tensor PipelineScheduleMulti::step(const Tensor& x, const Tensor& target, std::vector<Tensor>* losses) {
  std::vector<const PipelineStage*> stages;
  for (const PipelineStage& stage : stages_) stages.push_back(&stage);
  return run_step(plan_, stages, loss_fn_, x, target, losses);
}

Tensor run_step(const SchedulePlan& plan, const std::vector<const PipelineStage*>& stages,
                const LossFn& loss_fn, const Tensor& x, const Tensor& target, std::vector<Tensor>* losses) {
  const int n = plan.n_microbatches();
  const int last = plan.num_stages() - 1;
  if (stages.empty())
    throw Error(fmt::format("{}.step: no stages; pass the stages this rank holds", plan.name()));
  const ProcessGroup& group = stages.front()->group();
  auto rank_of = [&](int stage_index) { return world_rank(group, plan.rank_of_stage(stage_index)); };
  const int me = plan.rank_of_stage(stages.front()->stage_index());
  const std::string where = fmt::format("{}.step on pipeline rank {}", plan.name(), me);

  // The stages given must be exactly those the plan puts on this rank.
  std::map<int, const PipelineStage*> by_index;
  for (const PipelineStage* stage : stages) {
    if (stage->num_stages() != plan.num_stages())
      throw Error(fmt::format("{}: stage {} was made for {} stages, but the schedule has {}", where,
                              stage->stage_index(), stage->num_stages(), plan.num_stages()));
    if (!by_index.emplace(stage->stage_index(), stage).second)
      throw Error(fmt::format("{}: stage {} is given twice", where, stage->stage_index()));
  }
  std::vector<int> given;
  for (const auto& [index, stage] : by_index) given.push_back(index);
  if (given != plan.stages_of(me))
    throw Error(fmt::format("{}: the rank holds stages [{}], but the schedule puts stages [{}] on it", where,
                            fmt::join(given, ", "), fmt::join(plan.stages_of(me), ", ")));
  if (get_rank().as_int() != rank_of(given.front()))
    throw Error(fmt::format("{}: these stages run on world rank {}, but this is rank {}", where,
                            rank_of(given.front()), get_rank().as_int()));
  const bool has_first = by_index.count(0) != 0;
  const bool has_last = by_index.count(last) != 0;
  if (has_first && !x.defined())
    throw Error(
        fmt::format("{}: the rank holds the first stage, which takes the batch: call step(x)", where));
  if (!has_first && x.defined())
    throw Error(
        fmt::format("{}: only the rank holding the first stage takes the batch; call step() or "
                    "step({{}}, target, &losses)",
                    where));
  if (has_last && !target.defined())
    throw Error(
        fmt::format("{}: the rank holds the last stage, which takes the target: call step({{}}, target, "
                    "&losses)",
                    where));
  if (!has_last && (target.defined() || losses != nullptr))
    throw Error(fmt::format("{}: only the rank holding the last stage takes a target and losses", where));

  const std::vector<Tensor> inputs = has_first ? split_rows(x, n, "batch") : std::vector<Tensor>{};
  const std::vector<Tensor> targets = has_last ? split_rows(target, n, "target") : std::vector<Tensor>{};
  // Each message's tag names the stage that receives it and the micro-batch.
  auto tag_of = [&](int receiving_stage, int mb) { return receiving_stage * n + mb; };
  std::map<int, MicroBatches> state;
  for (int index : given) state.emplace(index, MicroBatches(n));

  // With split backwards (I and W) every stage boundary is cut: a stage's input is a leaf, I
  // computes its gradient alone and sends it (a message of its own), and W then accumulates the
  // weight gradients. With full backwards (B) the stages' graphs are joined by
  // dist::functional::send/recv and one backward runs through each stage.
  bool split = false;
  for (const Action& a : plan.actions(me)) split = split || a.type == ActionType::I;
  for (const Action& a : plan.actions(me))
    if (split && a.type == ActionType::B)
      throw Error(
          fmt::format("{}: the plan mixes full backwards ({}) and split ones (I and W) on this rank; step() "
                      "runs one kind per plan",
                      where, a.to_string()));
  auto gradient_tag = [&](int receiving_stage, int mb) { return -1 - tag_of(receiving_stage, mb); };
  // The outputs a stage's backward starts from, and their gradients (split backwards).
  auto roots = [&](int stage, size_t mb, std::vector<Tensor>& outs, std::vector<Tensor>& grads) {
    MicroBatches& here = state.at(stage);
    if (stage == last) {
      outs = {here.losses[mb]};
      grads = {};
    } else {
      outs = {here.outputs[mb]};
      grads = {plan.rank_of_stage(stage + 1) == me ? state.at(stage + 1).grad_in[mb] : here.grad_out[mb]};
    }
  };

  for (const Action& a : plan.actions(me)) {
    const auto mb = static_cast<size_t>(a.microbatch);
    MicroBatches& here = state.at(a.stage);
    switch (a.type) {
      case ActionType::RECV_F: {
        const int src = rank_of(a.stage - 1);
        const int tag = tag_of(a.stage, a.microbatch);
        Tensor like = receive_like(src, tag);
        if (split) {
          dist::recv(like, src, tag);
          here.received[mb] = like.set_requires_grad(true);
        } else {
          here.received[mb] = dist::functional::recv(like, src, tag);
        }
        break;
      }
      case ActionType::F: {
        Tensor in;
        if (a.stage == 0) {
          in = inputs[mb];
        } else if (plan.rank_of_stage(a.stage - 1) == me) {  // the previous stage is on this rank
          in = state.at(a.stage - 1).outputs[mb];
          if (split) in = in.detach().set_requires_grad(true);
        } else {
          in = here.received[mb];
        }
        here.used[mb] = in;
        here.outputs[mb] = by_index.at(a.stage)->forward(in);
        if (a.stage == last) here.losses[mb] = loss_fn(here.outputs[mb], targets[mb]);
        break;
      }
      case ActionType::SEND_F: {
        const int dst = rank_of(a.stage + 1);
        const int tag = tag_of(a.stage + 1, a.microbatch);
        send_header(here.outputs[mb], dst, tag);
        if (split)
          dist::send(here.outputs[mb], dst, tag);
        else
          here.tokens[mb] = dist::functional::send(here.outputs[mb], dst, tag);
        break;
      }
      case ActionType::B: {
        // The last stage starts from its loss; a stage that sent its output waits for that
        // output's gradient; a stage whose output stayed on this rank was reached already by the
        // next stage's backward (one graph).
        Tensor& root = a.stage == last ? here.losses[mb] : here.tokens[mb];
        if (root.defined() && root.requires_grad()) root.backward();
        if (a.stage != last) {
          root = Tensor();
          here.outputs[mb] = Tensor();
        }
        here.received[mb] = Tensor();
        break;
      }
      case ActionType::RECV_B: {
        if (!split) break;  // inside B (see the top of this file)
        Tensor grad = zeros(SymShape(here.outputs[mb].sizes()), TensorOptions(here.outputs[mb].dtype()));
        dist::recv(grad, rank_of(a.stage + 1), gradient_tag(a.stage, a.microbatch));
        here.grad_out[mb] = grad;
        break;
      }
      case ActionType::I: {
        if (!here.used[mb].requires_grad()) break;  // the first stage's input needs no gradient
        std::vector<Tensor> outs, grads;
        roots(a.stage, mb, outs, grads);
        here.grad_in[mb] = autograd::grad(outs, {here.used[mb]}, grads, /*retain_graph=*/true).at(0);
        break;
      }
      case ActionType::SEND_B: {
        if (!split) break;  // inside B
        dist::send(here.grad_in[mb], rank_of(a.stage - 1), gradient_tag(a.stage - 1, a.microbatch));
        break;
      }
      case ActionType::W: {
        std::vector<Tensor> outs, grads;
        roots(a.stage, mb, outs, grads);
        autograd::backward(outs, grads);
        break;
      }
    }
  }

  // PyTorch's default: the gradients summed over the micro-batches, scaled by 1/n_microbatches.
  {
    const NoGradGuard not_recorded;
    for (const auto& [index, stage] : by_index)
      for (const nn::Parameter& parameter : stage->module().parameters()) {
        Tensor value = parameter.local();
        const Tensor grad = value.grad();
        if (grad.defined()) value.set_grad(grad * (1.0 / static_cast<double>(n)));
      }
  }
  if (!has_last) return Tensor();
  MicroBatches& end = state.at(last);
  if (losses != nullptr)
    for (const Tensor& loss : end.losses) losses->push_back(loss.detach());
  const NoGradGuard not_recorded;
  std::vector<Tensor> outputs;
  for (const Tensor& out : end.outputs) outputs.push_back(out.detach());
  return cat(outputs, 0);
}

}  // namespace tessera::pipelining
