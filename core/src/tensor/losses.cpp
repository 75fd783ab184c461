// Loss functions as composites of existing ops (their gradients come from the parts), computing
// PyTorch's formulas: nll_loss picks -log_probs[target] per element, skips targets equal to
// ignore_index and, for "mean", divides by the number of targets not skipped (0/0 = NaN when all
// are); cross_entropy is nll_loss of log_softmax plus, with label smoothing eps,
// (1 - eps) * nll + eps / C * (-sum over classes of log_softmax), reduced the same way.
#include <fmt/format.h>

#include "dispatch/backend.hpp"
#include "tensor/index_check.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

using detail::impl_of;

void require_reduction(const char* op, const std::string& reduction) {
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    throw Error(fmt::format("{}: reduction is '{}', expected 'mean', 'sum' or 'none'", op, reduction));
}

// The class dim of an input of `ndim` dims: 1, or 0 for one unbatched sample (C).
int64_t class_dim_of(int64_t ndim) { return ndim == 1 ? 0 : 1; }

// target must be integral with the input's shape less the class dim; its values must be classes
// (0..C-1) or ignore_index. The values are read per rank (a shapes-only backend has none).
void check_target(const char* op, const Tensor& input, const Tensor& target, int64_t ignore_index) {
  if (!input.defined()) impl_of(input, op);
  if (!target.defined()) impl_of(target, op);
  if (!is_floating(input.dtype()))
    throw Error(
        fmt::format("{}: input has dtype {}, expected float32 or float64", op, dtype_name(input.dtype())));
  if (target.dtype() != kInt64 && target.dtype() != kInt32)
    throw Error(fmt::format("{}: target has dtype {}, expected int64 or int32 class indices", op,
                            dtype_name(target.dtype())));
  if (input.dim() == 0)
    throw Error(fmt::format("{}: input is 0-d, expected (C), (N, C) or (N, C, d1, ...)", op));
  const int64_t class_dim = class_dim_of(input.dim());
  std::vector<SymInt> expected;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (d != class_dim) expected.push_back(input.sym_size(d));
  if (!(target.shape() == SymShape(expected)))
    throw Error(fmt::format(
        "{}: target has shape {}, expected {} (the input's shape {} without the class dim {})", op,
        target.shape().to_string(), SymShape(expected).to_string(), input.shape().to_string(), class_dim));
  detail::spmd(
      op,
      [&](const Tensor& t, const Tensor& in) {
        detail::check_class_targets(t, in.size(class_dim), ignore_index, op);
      },
      target, input);
}

// Per-element losses (target's shape) reduced as `reduction` says, "mean" over `kept` (1 where the
// target counts, 0 where it is ignored).
Tensor reduce_loss(const Tensor& losses, const Tensor& kept, const std::string& reduction) {
  if (reduction == "none") return losses;
  if (reduction == "sum") return sum(losses);
  return sum(losses) / sum(kept);
}

// -log_probs[target] per element, 0 where the target is ignored; and the mask of kept targets.
std::pair<Tensor, Tensor> picked_losses(const Tensor& log_probs, const Tensor& target, int64_t ignore_index) {
  const int64_t class_dim = class_dim_of(log_probs.dim());
  const Tensor t = target.to(kInt64);
  const Tensor kept_int = ne(t, Scalar(ignore_index)).to(kInt64);
  const Tensor kept = kept_int.to(log_probs.dtype());
  const Tensor picked = gather(log_probs, class_dim, (t * kept_int).unsqueeze(class_dim)).squeeze(class_dim);
  return {neg(picked) * kept, kept};
}

}  // namespace

namespace detail {
void check_class_targets(const Tensor& target, int64_t classes, int64_t ignore_index, const char* op) {
  detail::spmd(
      op,
      [&](const Tensor& t) {
        if (t.numel() == 0 || impl_of(t, op).backend().shapes_only()) return;
        const Tensor kept = t.to(kInt64) * ne(t, Scalar(ignore_index)).to(kInt64);
        const int64_t lo = min(kept).item<int64_t>(), hi = max(kept).item<int64_t>();
        if (lo < 0 || hi >= classes)
          throw Error(fmt::format(
              "{}: target {} is out of bounds for {} classes, expected 0..{} or ignore_index ({})", op,
              lo < 0 ? lo : hi, classes, classes - 1, ignore_index));
      },
      target);
}
}  // namespace detail

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const NllLossOptions& options) {
  require_reduction("nll_loss", options.reduction);
  check_target("nll_loss", log_probs, target, options.ignore_index);
  const auto [losses, kept] = picked_losses(log_probs, target, options.ignore_index);
  return reduce_loss(losses, kept, options.reduction);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options) {
  require_reduction("cross_entropy", options.reduction);
  if (!(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0))
    throw Error(fmt::format("cross_entropy: label_smoothing is {}, expected a value in [0, 1]",
                            options.label_smoothing));
  check_target("cross_entropy", logits, target, options.ignore_index);
  const int64_t class_dim = class_dim_of(logits.dim());
  const Tensor log_probs = log_softmax(logits, class_dim);
  const auto [losses, kept] = picked_losses(log_probs, target, options.ignore_index);
  Tensor nll = reduce_loss(losses, kept, options.reduction);
  if (options.label_smoothing == 0.0) return nll;
  const double eps = options.label_smoothing;
  const Tensor smooth = reduce_loss(neg(sum(log_probs, {class_dim})) * kept, kept, options.reduction);
  return nll * (1.0 - eps) + smooth * (eps / static_cast<double>(logits.size(class_dim)));
}

Tensor mse_loss(const Tensor& a, const Tensor& b, const std::string& reduction) {
  require_reduction("mse_loss", reduction);
  if (!a.defined()) impl_of(a, "mse_loss");
  if (!b.defined()) impl_of(b, "mse_loss");
  if (!is_floating(a.dtype()) || !is_floating(b.dtype()))
    throw Error(fmt::format("mse_loss: inputs have dtypes {} and {}, expected float32 or float64",
                            dtype_name(a.dtype()), dtype_name(b.dtype())));
  const Tensor d = a - b;
  Tensor squared = d * d;
  if (reduction == "none") return squared;
  return reduction == "sum" ? sum(squared) : mean(squared);
}

}  // namespace tessera
