// clip_grad_norm_ over Tensor, DTensor and module parameters; see tessera/nn/utils.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/nn/utils.hpp"
#include "tessera/ops.hpp"

namespace tessera::nn::utils {
namespace {

// One gradient to clip: the tensor scaled in place (a DTensor's local tensor, Partial
// contributions as they are) and, for a DTensor gradient, its layout.
struct Gradient {
  Tensor local;
  std::optional<DTensor> dtensor;
};

void check_options(double max_norm, double norm_type) {
  if (!(norm_type > 0.0))
    throw Error(
        fmt::format("clip_grad_norm_: norm_type is {}; expected a positive p (2 for the Euclidean norm) or "
                    "INFINITY (the largest absolute value)",
                    norm_type));
  // A negative max_norm would flip every gradient's sign (PyTorch does not check).
  if (!(max_norm >= 0.0))
    throw Error(fmt::format("clip_grad_norm_: max_norm is {}; expected max_norm >= 0", max_norm));
}

void check_defined(bool defined, size_t index) {
  if (!defined)
    throw Error(
        fmt::format("clip_grad_norm_: parameter {} is undefined (default-constructed); pass parameters "
                    "that hold a value",
                    index));
}

Gradient of_dtensor(const DTensor& param) { return {param.grad().to_local(), param.grad()}; }

std::vector<Gradient> gradients_of(const std::vector<Tensor>& params) {
  std::vector<Gradient> grads;
  for (size_t i = 0; i < params.size(); ++i) {
    check_defined(params[i].defined(), i);
    if (Tensor grad = params[i].grad(); grad.defined()) grads.push_back({grad, std::nullopt});
  }
  return grads;
}

std::vector<Gradient> gradients_of(const std::vector<DTensor>& params) {
  std::vector<Gradient> grads;
  for (const DTensor& param : params)
    if (param.has_grad()) grads.push_back(of_dtensor(param));
  return grads;
}

std::vector<Gradient> gradients_of(const std::vector<Parameter>& params) {
  std::vector<Gradient> grads;
  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& param = params[i];
    check_defined(param.defined(), i);
    if (!param.has_grad()) continue;
    if (param.is_dtensor()) {
      grads.push_back(of_dtensor(param.dtensor()));
    } else {
      grads.push_back({param.grad(), std::nullopt});
    }
  }
  return grads;
}

// Per rank: the sum of |g|^p over the rank's elements, or the largest |g| for the inf norm (0 on
// a rank holding no elements: an uneven shard), as a 0-d float64 tensor.
Tensor local_power_sum(const Tensor& grad, double norm_type) {
  const Tensor magnitude = abs(grad.to(kFloat64));
  if (std::isinf(norm_type)) {
    // A zero beside the elements: max of an empty shard is not defined, and norms are >= 0.
    const Tensor zero = zeros_like(sum(magnitude)).reshape({1});
    return max(cat({magnitude.reshape({-1}), zero}));
  }
  if (norm_type == 1.0) return sum(magnitude);
  if (norm_type == 2.0) return sum(magnitude * magnitude);
  return sum(pow(magnitude, norm_type));
}

// A DTensor gradient's local power sum and how it combines into its full tensor's: over the
// mesh dims it is sharded on (sum, or max for the inf norm); a replicated dim already holds the
// whole on each of its ranks.
struct LocalPowerSum {
  Tensor value;
  DeviceMesh mesh;
  Placements layout;
};

LocalPowerSum dtensor_power_sum(const DTensor& grad, double norm_type) {
  // Pending contributions are not the gradient's values yet: reduce them (for the norm only).
  Placements reduced = grad.placements();
  for (Placement& p : reduced)
    if (p.is_partial()) p = Replicate();
  const DTensor values = reduced == grad.placements() ? grad : grad.redistribute(reduced);
  Placements layout;
  for (const Placement& p : values.placements())
    layout.push_back(p.is_shard() ? Partial(std::isinf(norm_type) ? "max" : "sum") : Replicate());
  return {local_power_sum(values.to_local(), norm_type), values.device_mesh(), std::move(layout)};
}

Tensor combine(const Tensor& a, const Tensor& b, double norm_type) {
  if (!a.defined()) return b;
  return std::isinf(norm_type) ? maximum(a, b) : a + b;
}

Tensor total_norm_of(const std::vector<Gradient>& grads, double norm_type) {
  // DTensor gradients that combine alike (same mesh and sharded dims) are summed locally first,
  // so the whole clip costs one all_reduce per such group and mesh dim, not one per parameter.
  std::vector<LocalPowerSum> groups;
  Tensor total;
  for (const Gradient& g : grads) {
    if (!g.dtensor) {
      total = combine(total, local_power_sum(g.local, norm_type), norm_type);
      continue;
    }
    LocalPowerSum part = dtensor_power_sum(*g.dtensor, norm_type);
    auto same = std::find_if(groups.begin(), groups.end(), [&](const LocalPowerSum& group) {
      return group.mesh == part.mesh && group.layout == part.layout;
    });
    if (same == groups.end()) {
      groups.push_back(std::move(part));
    } else {
      same->value = combine(same->value, part.value, norm_type);
    }
  }
  for (const LocalPowerSum& group : groups)
    total =
        combine(total, from_local(group.value, group.mesh, group.layout, Shape{}).full_tensor(), norm_type);
  if (std::isinf(norm_type) || norm_type == 1.0) return total;
  if (norm_type == 2.0) return sqrt(total);
  return pow(total, 1.0 / norm_type);
}

// Each rank's value of a 0-d tensor (one entry for a plain tensor), with the rank for messages.
std::vector<std::pair<int, double>> values_of(const Tensor& total) {
  if (!total.is_local()) return {{-1, total.item().to_double()}};
  std::vector<std::pair<int, double>> values;
  for (int rank : total.ranks()) values.emplace_back(rank, total.shard(rank).item().to_double());
  return values;
}

void check_finite(const Tensor& total, double norm_type) {
  for (const auto& [rank, value] : values_of(total)) {
    if (std::isfinite(value)) continue;
    const std::string where = rank < 0 ? "" : fmt::format(" (rank {})", rank);
    throw Error(
        fmt::format("clip_grad_norm_: the total norm of order {} of the gradients is {}{}, so they cannot be "
                    "clipped; nothing was scaled. To scale them by the non-finite norm anyway, pass "
                    "error_if_nonfinite = false",
                    norm_type, value, where));
  }
}

void scale(const std::vector<Gradient>& grads, const Tensor& total, double max_norm) {
  // PyTorch's coefficient, clamped to 1; when it is 1 on every rank nothing is written.
  const Tensor coefficient = clamp(max_norm / (total + 1e-6), std::nullopt, 1.0);
  bool all_one = true;
  for (const auto& entry : values_of(coefficient)) all_one = all_one && entry.second == 1.0;
  if (all_one) return;
  // A plain gradient is what every rank holds: it takes the one coefficient all ranks agree on.
  // Checked for every gradient before any is scaled.
  std::optional<Tensor> shared_coefficient;
  for (const Gradient& g : grads) {
    if (g.local.is_local() || !coefficient.is_local() || shared_coefficient) continue;
    const auto values = values_of(coefficient);
    for (const auto& [rank, value] : values)
      if (!(value == values.front().second))
        throw Error(
            fmt::format("clip_grad_norm_: a plain-tensor gradient (one value for every rank) cannot be "
                        "scaled by the ranks' "
                        "different coefficients (rank {}: {}, rank {}: {}; local-tensor gradients give each "
                        "rank its own total); "
                        "nothing was scaled",
                        values.front().first, values.front().second, rank, value));
    shared_coefficient = coefficient.shard(values.front().first);
  }
  for (const Gradient& g : grads) {
    Tensor local = g.local;
    const Tensor& factor = !local.is_local() && shared_coefficient ? *shared_coefficient : coefficient;
    local.copy_(local * factor.to(local.dtype()));
  }
}

Tensor clip(const std::vector<Gradient>& grads, double max_norm, double norm_type, bool error_if_nonfinite,
            bool single_value) {
  NoGradGuard no_grad;  // clipping is not part of any model's computation
  if (grads.empty()) return scalar_tensor(0.0, kFloat64);
  Tensor total = total_norm_of(grads, norm_type);
  if (single_value) {
    const auto values = values_of(total);
    for (const auto& [rank, value] : values)
      if (!(value == values.front().second) && !(std::isnan(value) && std::isnan(values.front().second)))
        throw Error(fmt::format(
            "clip_grad_norm_: the ranks' total norms differ (rank {}: {}, rank {}: {}): local-tensor "
            "gradients hold one value per rank, so each rank has its own norm; nothing was scaled. "
            "Use clip_grad_norm_per_rank_, which returns each rank's total",
            values.front().first, values.front().second, rank, value));
  }
  if (error_if_nonfinite) check_finite(total, norm_type);
  scale(grads, total, max_norm);
  return total;
}

double single(const Tensor& total) { return values_of(total).front().second; }

}  // namespace

double clip_grad_norm_(const std::vector<Parameter>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite, std::optional<bool> /*foreach*/) {
  check_options(max_norm, norm_type);
  return single(clip(gradients_of(parameters), max_norm, norm_type, error_if_nonfinite, true));
}

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite, std::optional<bool> /*foreach*/) {
  check_options(max_norm, norm_type);
  return single(clip(gradients_of(parameters), max_norm, norm_type, error_if_nonfinite, true));
}

double clip_grad_norm_(const std::vector<DTensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite, std::optional<bool> /*foreach*/) {
  check_options(max_norm, norm_type);
  return single(clip(gradients_of(parameters), max_norm, norm_type, error_if_nonfinite, true));
}

Tensor clip_grad_norm_per_rank_(const std::vector<Parameter>& parameters, double max_norm, double norm_type,
                                bool error_if_nonfinite, std::optional<bool> /*foreach*/) {
  check_options(max_norm, norm_type);
  return clip(gradients_of(parameters), max_norm, norm_type, error_if_nonfinite, false);
}

Tensor clip_grad_norm_per_rank_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                                bool error_if_nonfinite, std::optional<bool> /*foreach*/) {
  check_options(max_norm, norm_type);
  return clip(gradients_of(parameters), max_norm, norm_type, error_if_nonfinite, false);
}

Tensor clip_grad_norm_per_rank_(const std::vector<DTensor>& parameters, double max_norm, double norm_type,
                                bool error_if_nonfinite, std::optional<bool> /*foreach*/) {
  check_options(max_norm, norm_type);
  return clip(gradients_of(parameters), max_norm, norm_type, error_if_nonfinite, false);
}

}  // namespace tessera::nn::utils
