// layer_norm and rms_norm over the trailing dims `normalized_shape` names. Where the input's backend
// has the fused kernels (norm_kernels.hpp) they compute each shard in one call; otherwise the ops
// are composed of existing ops as PyTorch's decompositions are (biased variance; rsqrt of the mean
// square plus eps), so autograd, local tensors and every backend come from their parts. Rows are
// independent: a tensor split along a leading dim normalises shard by shard (what DTensor's
// sequence parallel rule relies on).
#include <fmt/format.h>

#include <limits>
#include <numeric>

#include "dispatch/user_call.hpp"
#include "tensor/float32_compute.hpp"
#include "tensor/internal.hpp"
#include "tensor/norm_kernels.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

std::string norm_shape_text(const std::vector<int64_t>& sizes) { return shape_text(sizes); }

// x's trailing dims must be normalized_shape, and a weight or bias exactly that shape.
void check_norm_shapes(const char* op, const Tensor& x, const std::vector<int64_t>& normalized_shape,
                       const Tensor& weight, const Tensor& bias) {
  if (normalized_shape.empty())
    throw Error(
        fmt::format("{}: normalized_shape is empty, expected at least one dim to normalise over", op));
  const size_t k = normalized_shape.size();
  detail::spmd_pure(
      op,
      [&](const Tensor& t) {
        const Shape& s = detail::impl_of(t, op).sizes();
        if (s.size() < k || !std::equal(normalized_shape.begin(), normalized_shape.end(),
                                        s.end() - static_cast<ptrdiff_t>(k)))
          throw Error(fmt::format(
              "{}: normalized_shape is {}, expected the input's trailing dims to be that, but the input "
              "has shape {}",
              op, norm_shape_text(normalized_shape), shape_text(s)));
        if (!is_floating(t.dtype()))
          throw Error(fmt::format("{}: the input has dtype {}, expected a floating dtype", op,
                                  dtype_name(t.dtype())));
      },
      x);
  for (const auto& [param, role] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}}) {
    if (!param.defined()) continue;
    const char* name = role;  // a lambda may not capture a structured binding (Clang before 16)
    detail::spmd_pure(
        op,
        [&](const Tensor& t) {
          if (detail::impl_of(t, op).sizes() != normalized_shape)
            throw Error(fmt::format("{}: the {} has shape {}, expected normalized_shape {}", op, name,
                                    shape_text(t.sizes()), norm_shape_text(normalized_shape)));
        },
        param);
  }
}

std::vector<int64_t> normalized_dims(const Tensor& x, size_t k) {
  std::vector<int64_t> dims(k);
  std::iota(dims.begin(), dims.end(), x.dim() - static_cast<int64_t>(k));
  return dims;
}

// PyTorch's default eps of rms_norm: the machine epsilon of the input's dtype (torch.finfo(dtype).eps).
double machine_epsilon(DType dtype) {
  switch (dtype) {
    case kFloat64:
      return std::numeric_limits<double>::epsilon();
    case kBFloat16:
      return 0.0078125;  // 2^-7: 8 significand bits
    case kFloat16:
      return 0.0009765625;  // 2^-10: 11 significand bits
    default:
      return static_cast<double>(std::numeric_limits<float>::epsilon());
  }
}

// eps is added to a variance (a mean square) before its square root: a negative or NaN eps would
// give NaN rows, so it is refused, on every backend alike.
void check_eps(const char* op, double eps) {
  if (!(eps >= 0)) throw Error(fmt::format("{}: eps is {}, expected a number >= 0", op, eps));
}

// The fused kernels take the weight and bias in the compute dtype (float64 for a float64 input,
// float32 otherwise); a weight that would lose bits on the way (float64 beside a float32 input, or
// an integer one) keeps the composite, which promotes as the element-wise ops do.
bool fused_norm_fits(detail::NormKind kind, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const DType compute = x.dtype() == kFloat64 ? kFloat64 : kFloat32;
  for (const Tensor* p : {&weight, &bias})
    if (p->defined() && (!is_floating(p->dtype()) || (p->dtype() == kFloat64 && compute != kFloat64)))
      return false;
  return detail::has_norm_kernels(kind, x);
}

}  // namespace

Tensor layer_norm(const Tensor& x, const std::vector<int64_t>& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const dispatch::UserCall call("ts::layer_norm");
  check_norm_shapes("layer_norm", x, normalized_shape, weight, bias);
  check_eps("layer_norm", eps);
  if (fused_norm_fits(detail::NormKind::kLayer, x, weight, bias))
    return detail::fused_norm(detail::NormKind::kLayer, x, normalized_shape.size(), weight, bias, eps);
  const std::vector<int64_t> dims = normalized_dims(x, normalized_shape.size());
  const Tensor wide = detail::widened(x);
  const Tensor centred = wide - mean(wide, dims, true);
  const Tensor variance = mean(centred * centred, dims, true);
  Tensor out = centred * rsqrt(variance + eps);
  if (weight.defined()) out = out * detail::widened(weight);
  if (bias.defined()) out = out + detail::widened(bias);
  return detail::narrowed(out, x.dtype());
}

Tensor rms_norm(const Tensor& x, const std::vector<int64_t>& normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  const dispatch::UserCall call("ts::rms_norm");
  check_norm_shapes("rms_norm", x, normalized_shape, weight, Tensor());
  const std::vector<int64_t> dims = normalized_dims(x, normalized_shape.size());
  const double e = eps ? *eps : machine_epsilon(x.dtype());
  check_eps("rms_norm", e);
  if (fused_norm_fits(detail::NormKind::kRms, x, weight, Tensor()))
    return detail::fused_norm(detail::NormKind::kRms, x, normalized_shape.size(), weight, Tensor(), e);
  const Tensor wide = detail::widened(x);
  Tensor out = wide * rsqrt(mean(wide * wide, dims, true) + e);
  if (weight.defined()) out = out * detail::widened(weight);
  return detail::narrowed(out, x.dtype());
}

}  // namespace tessera
