// PipelineScheduleSingle::step: one rank runs its stage's actions for every micro-batch.
//
// Activations travel with dist::functional::send/recv, tagged with the micro-batch number; each
// one is preceded by a small header (dtype and shape) so that the receiver can make the tensor it
// receives into. The gradient half of a message needs no action of its own: a stage's backward
// (the token of its send) waits for the gradient, and the backward of what a stage received sends
// the gradient back, so RECV_B and SEND_B happen inside B.
#include <fmt/format.h>

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

PipelineScheduleSingle::PipelineScheduleSingle(PipelineStage& stage, int n_microbatches, LossFn loss_fn,
                                               SchedulePlan plan)
    : stage_(&stage), loss_fn_(std::move(loss_fn)), plan_(std::move(plan)) {
  if (!loss_fn_)
    throw Error(
        fmt::format("{}: loss_fn is empty; a training step's backward starts from the loss (forward-only "
                    "schedules are not provided)",
                    plan_.name()));
  (void)n_microbatches;  // the plan holds it
}

Tensor PipelineScheduleSingle::step(const Tensor& x, const Tensor& target, std::vector<Tensor>* losses) {
  const PipelineStage& stage = *stage_;
  const int s = stage.stage_index();
  const int n = plan_.n_microbatches();
  const std::string where = fmt::format("{}.step on stage {}", plan_.name(), s);
  if (stage.is_first() && !x.defined())
    throw Error(fmt::format("{}: the first stage takes the batch: call step(x)", where));
  if (!stage.is_first() && x.defined())
    throw Error(fmt::format(
        "{}: only the first stage takes the batch; call step() or step({{}}, target, &losses)", where));
  if (stage.is_last() && !target.defined())
    throw Error(fmt::format("{}: the last stage takes the target: call step({{}}, target, &losses)", where));
  if (!stage.is_last() && (target.defined() || losses != nullptr))
    throw Error(fmt::format("{}: only the last stage takes a target and losses", where));

  const std::vector<Tensor> inputs = stage.is_first() ? split_rows(x, n, "batch") : std::vector<Tensor>{};
  const std::vector<Tensor> targets =
      stage.is_last() ? split_rows(target, n, "target") : std::vector<Tensor>{};
  const ProcessGroup& group = stage.group();
  auto rank_of = [&](int stage_index) { return world_rank(group, plan_.rank_of_stage(stage_index)); };
  if (get_rank().as_int() != rank_of(s))
    throw Error(
        fmt::format("{}: stage {} runs on rank {} of the pipeline (world rank {}), but this is rank {}",
                    where, s, plan_.rank_of_stage(s), rank_of(s), get_rank().as_int()));

  std::vector<Tensor> received(static_cast<size_t>(n)), outputs(static_cast<size_t>(n)),
      tokens(static_cast<size_t>(n)), loss_of(static_cast<size_t>(n));
  for (const Action& a : plan_.actions(s)) {
    const auto mb = static_cast<size_t>(a.microbatch);
    switch (a.type) {
      case ActionType::RECV_F: {
        const int src = rank_of(s - 1);
        received[mb] = dist::functional::recv(receive_like(src, a.microbatch), src, a.microbatch);
        break;
      }
      case ActionType::F: {
        outputs[mb] = stage.forward(stage.is_first() ? inputs[mb] : received[mb]);
        if (stage.is_last()) loss_of[mb] = loss_fn_(outputs[mb], targets[mb]);
        break;
      }
      case ActionType::SEND_F: {
        const int dst = rank_of(s + 1);
        send_header(outputs[mb], dst, a.microbatch);
        tokens[mb] = dist::functional::send(outputs[mb], dst, a.microbatch);
        outputs[mb] = Tensor();  // the next stage holds it now; the graph keeps what backward needs
        break;
      }
      case ActionType::B: {
        Tensor& root = stage.is_last() ? loss_of[mb] : tokens[mb];
        if (root.requires_grad()) root.backward();
        if (!stage.is_last()) root = Tensor();
        received[mb] = Tensor();
        break;
      }
      case ActionType::RECV_B:
      case ActionType::SEND_B:
        break;  // inside B (see the top of this file)
      case ActionType::I:
      case ActionType::W:
        throw Error(fmt::format("{}: {} splits the backward, which this schedule does not run", where,
                                a.to_string()));
    }
  }

  // PyTorch's default: the gradients summed over the micro-batches, scaled by 1/n_microbatches.
  {
    const NoGradGuard not_recorded;
    for (const nn::Parameter& parameter : stage.module().parameters()) {
      Tensor value = parameter.local();
      const Tensor grad = value.grad();
      if (grad.defined()) value.set_grad(grad * (1.0 / static_cast<double>(n)));
    }
  }
  if (!stage.is_last()) return Tensor();
  if (losses != nullptr)
    for (const Tensor& loss : loss_of) losses->push_back(loss.detach());
  const NoGradGuard not_recorded;
  for (Tensor& out : outputs) out = out.detach();
  return cat(outputs, 0);
}

}  // namespace tessera::pipelining
