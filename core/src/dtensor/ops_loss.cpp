// cross_entropy and mse_loss on DTensors.
//
// cross_entropy per mesh dim: logits and target sharded alike on a batch dim keep the per-element
// losses sharded there; a class-dim shard is gathered to Replicate first (as PyTorch does) unless a
// LossParallel scope is open on this thread. Inside one, logits sharded on the class dim stay
// sharded and the loss is computed as PyTorch's loss_parallel does: the local max, then
// all_reduce(max); the local sum of exp(x - max), then all_reduce(sum); the target's logit by a
// masked local gather (only the rank owning the target class contributes), then all_reduce(sum)
// (with label smoothing one more all_reduce(sum) of the logits' sum over classes). Each all_reduce
// carries one value per target, never the vocabulary; the backward is local (softmax of the
// shard minus the one-hot at the owning rank) and communicates nothing.
#include <fmt/format.h>

#include <utility>

#include "dtensor/held_range.hpp"
#include "dtensor/ops_common.hpp"
#include "dtensor/thread_modes.hpp"
#include "tensor/index_check.hpp"
#include "tensor/tensor_impl.hpp"  // shape_text
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

constexpr const char* kOp = "cross_entropy";

thread_local bool loss_parallel_enabled = false;

// Per-target values whose layout is `base` but for the mesh dims `class_dims`, where each rank holds
// a term: reduced with `reduce_op` over those dims, so every rank there holds the result.
Tensor all_reduce_terms(const Tensor& terms, const DeviceMesh& mesh, const Placements& base,
                        const std::vector<size_t>& class_dims, const char* reduce_op, const Shape& shape) {
  Placements partial = base;
  for (size_t i : class_dims) partial[i] = Partial(reduce_op);
  return DTensor(terms, mesh, partial, shape).redistribute(base).to_local();
}

struct PerTarget {
  Tensor losses;  // local, the target's layout
  Tensor kept;    // 1 where the target counts, 0 where it is ignore_index
};

// The loss-parallel forward on the local logits `x` (class dim `cd` sharded over `class_dims`).
PerTarget loss_parallel(const DTensor& logits, const DTensor& target, int64_t cd,
                        const std::vector<size_t>& class_dims, const Placements& base,
                        const CrossEntropyOptions& options) {
  const dtensor::HeldRange range = dtensor::held_range(logits, cd, kOp);
  const int64_t classes = logits.shape()[static_cast<size_t>(cd)];
  if (range.some_empty)
    throw Error(
        fmt::format("{} under LossParallel: some rank holds none of the {} classes (placements {}); expected "
                    "at least one class per rank",
                    kOp, classes, placements_text(logits.placements())));
  const DeviceMesh& mesh = logits.device_mesh();
  const Shape& shape = target.shape();
  const Tensor& x = logits.to_local();
  const Tensor t = target.to_local().to(kInt64);
  detail::check_class_targets(t, classes, options.ignore_index, kOp);

  // The max only keeps exp() in range; it cancels out of the loss, so it carries no gradient.
  const Tensor m = all_reduce_terms(max(x.detach(), {cd}), mesh, base, class_dims, "max", shape);
  const Tensor z =
      all_reduce_terms(sum(exp(x - m.unsqueeze(cd)), {cd}), mesh, base, class_dims, "sum", shape);
  const Tensor log_sum_exp = log(z) + m;

  const Tensor counts = ne(t, Scalar(options.ignore_index));
  const Tensor local_class = t - range.start;
  const Tensor owned = ge(local_class, 0) * lt(local_class, range.length) * counts;
  const Tensor safe = local_class * owned.to(kInt64);
  const Tensor picked_terms = gather(x, cd, safe.unsqueeze(cd)).squeeze(cd) * owned.to(x.dtype());
  const Tensor picked = all_reduce_terms(picked_terms, mesh, base, class_dims, "sum", shape);

  const Tensor kept = counts.to(x.dtype());
  Tensor losses = (log_sum_exp - picked) * kept;
  if (options.label_smoothing > 0.0) {
    // -sum over classes of log_softmax = C * log_sum_exp - sum over classes of x.
    const double eps = options.label_smoothing;
    const Tensor sum_x = all_reduce_terms(sum(x, {cd}), mesh, base, class_dims, "sum", shape);
    const Tensor smooth = (log_sum_exp * static_cast<double>(classes) - sum_x) * kept;
    losses = losses * (1.0 - eps) + smooth * (eps / static_cast<double>(classes));
  }
  return {losses, kept};
}

void require_reduction(const std::string& reduction, const char* op) {
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    throw Error(fmt::format("{}: reduction is '{}', expected 'mean', 'sum' or 'none'", op, reduction));
}

}  // namespace

void set_loss_parallel(bool enabled) { loss_parallel_enabled = enabled; }
bool loss_parallel() { return loss_parallel_enabled; }

namespace dtensor {
bool& thread_loss_parallel() { return loss_parallel_enabled; }
}  // namespace dtensor

DTensor cross_entropy(const DTensor& logits, const DTensor& target, const CrossEntropyOptions& options) {
  require_reduction(options.reduction, kOp);
  if (!(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0))
    throw Error(
        fmt::format("{}: label_smoothing is {}, expected a value in [0, 1]", kOp, options.label_smoothing));
  if (logits.dim() == 0 || target.dim() != logits.dim() - 1)
    throw Error(
        fmt::format("{} on DTensors: logits have shape {} and target {}; expected (C) with a 0-d target, or "
                    "(N, C, d1, ...) with (N, d1, ...)",
                    kOp, shape_text(logits.shape()), shape_text(target.shape())));
  const int64_t cd = logits.dim() == 1 ? 0 : 1;
  for (int64_t d = 0, dt = 0; d < logits.dim(); ++d) {
    if (d == cd) continue;
    if (logits.shape()[static_cast<size_t>(d)] != target.shape()[static_cast<size_t>(dt++)])
      throw Error(
          fmt::format("{}: target has shape {}, expected the logits' shape {} without the class dim {}", kOp,
                      shape_text(target.shape()), shape_text(logits.shape()), cd));
  }
  const bool parallel = loss_parallel_enabled;
  const dtensor::Prepared plan = dtensor::prepare(kOp, {logits, target}, [&](size_t i) {
    const Placement& pl = logits.placements()[i];
    const Placement& pt = target.placements()[i];
    std::vector<Strategy> s;
    if (parallel) s.push_back({{dtensor::shard_like(pl, cd), Replicate()}, Replicate()});
    // Outside LossParallel a class-dim shard is gathered (PyTorch's log_softmax rule replicates
    // the dim it normalises), not moved to another dim however cheap that would be.
    if (!parallel && pl.is_shard(cd)) return std::vector<Strategy>{{{Replicate(), Replicate()}, Replicate()}};
    for (int64_t d = 0; d < logits.dim(); ++d)
      if (d != cd)
        s.push_back({{dtensor::shard_like(pl, d), dtensor::shard_like(pl, d < cd ? d : d - 1)},
                     dtensor::shard_like(pl, d < cd ? d : d - 1)});
    s.push_back({{Replicate(), Replicate()}, Replicate()});
    return dtensor::matching_first(std::move(s), {pl, pt});
  });
  std::vector<size_t> class_dims;
  for (size_t i = 0; i < plan.output.size(); ++i)
    if (plan.inputs[0].placements()[i].is_shard(cd)) class_dims.push_back(i);
  PerTarget per;
  if (class_dims.empty()) {
    const Tensor t = plan.inputs[1].to_local();
    per.losses =
        cross_entropy(plan.inputs[0].to_local(), t, {options.ignore_index, "none", options.label_smoothing});
    per.kept = ne(t, Scalar(options.ignore_index)).to(logits.dtype());
  } else {
    per = loss_parallel(plan.inputs[0], plan.inputs[1], cd, class_dims, plan.output, options);
  }
  const DeviceMesh& mesh = logits.device_mesh();
  DTensor losses(per.losses, mesh, plan.output, target.shape());
  if (options.reduction == "none") return losses;
  if (options.reduction == "sum") return sum(losses);
  // PyTorch's "mean": over the targets that count (0 / 0 = NaN when none does).
  return div(sum(losses), sum(DTensor(per.kept, mesh, plan.output, target.shape())));
}

DTensor mse_loss(const DTensor& a, const DTensor& b, const std::string& reduction) {
  require_reduction(reduction, "mse_loss");
  const DTensor d = sub(a, b);
  DTensor squared = mul(d, d);
  if (reduction == "none") return squared;
  return reduction == "sum" ? sum(squared) : mean(squared);
}

}  // namespace tessera
