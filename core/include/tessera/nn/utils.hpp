// nn::utils (PyTorch: torch.nn.utils): gradient clipping by total norm.
//
// clip_grad_norm_ computes the norm of all the gradients together (as if concatenated into one
// vector; parameters without a gradient are skipped), and when it exceeds max_norm scales every
// gradient in place by max_norm / (total + 1e-6). The coefficient is clamped to 1, so gradients
// whose total is at most max_norm are left as they are (not even rewritten).
//
// DTensor gradients count with their full tensor's norm, the GLOBAL one: each rank's shard sums
// (|g|^p, or the largest |g| for the inf norm) are reduced over the mesh dims where the gradient
// is sharded (one all_reduce per such dim, over a 0-d float64 value; Replicate dims are not
// counted twice and cost nothing). A Partial gradient (per-rank contributions still pending) is
// reduced first: one all_reduce of the gradient over each Partial mesh dim, for the norm only; the
// stored gradient stays Partial and is scaled as it is. Parameters on different meshes (a dp x tp
// mesh and its tp sub-mesh) combine: every rank adds the totals of the meshes it belongs to.
//
// A plain local tensor (one value per rank, LocalMode) is one value per rank: its norm is each
// rank's own, as it would be in separate processes, and each rank's gradients are scaled by that
// rank's coefficient. clip_grad_norm_per_rank_ returns the total as a tensor with each rank's
// value; clip_grad_norm_ returns a double, and refuses (before scaling anything) a call whose
// ranks' totals differ.
//
// The sums are accumulated in float64 whatever the gradients' dtype (PyTorch accumulates in the
// gradients' dtype: float32 totals can differ from its in the last bits); the scaled gradients
// keep their dtype. norm_type is a positive p (2 by default) or INFINITY (the largest |g|).
// With error_if_nonfinite, a NaN or infinite total is an error and nothing is scaled; without
// it, PyTorch's behaviour: the gradients are scaled by the non-finite coefficient. `foreach` is
// PyTorch's choice of kernel: accepted and ignored (the result is the same).
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "tessera/dtensor.hpp"
#include "tessera/nn/parameter.hpp"
#include "tessera/tensor.hpp"

namespace tessera::nn::utils {

double clip_grad_norm_(const std::vector<Parameter>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false, std::optional<bool> foreach = std::nullopt);
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false, std::optional<bool> foreach = std::nullopt);
double clip_grad_norm_(const std::vector<DTensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false, std::optional<bool> foreach = std::nullopt);
// Braced lists: {w, b} of Tensors takes the Tensor list, {dt} the DTensor list, a mix the
// parameter list (without these, {w} would match every vector above).
inline double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm,
                              double norm_type = 2.0, bool error_if_nonfinite = false,
                              std::optional<bool> foreach = std::nullopt) {
  return clip_grad_norm_(std::vector<Tensor>(parameters), max_norm, norm_type, error_if_nonfinite, foreach);
}
inline double clip_grad_norm_(std::initializer_list<DTensor> parameters, double max_norm,
                              double norm_type = 2.0, bool error_if_nonfinite = false,
                              std::optional<bool> foreach = std::nullopt) {
  return clip_grad_norm_(std::vector<DTensor>(parameters), max_norm, norm_type, error_if_nonfinite, foreach);
}
inline double clip_grad_norm_(std::initializer_list<Parameter> parameters, double max_norm,
                              double norm_type = 2.0, bool error_if_nonfinite = false,
                              std::optional<bool> foreach = std::nullopt) {
  return clip_grad_norm_(std::vector<Parameter>(parameters), max_norm, norm_type, error_if_nonfinite,
                         foreach);
}

// The same clipping; the total norm as a 0-d float64 tensor (PyTorch returns a tensor): a local
// tensor with each rank's total when a gradient is a local tensor or a DTensor (under LocalMode),
// else a plain one.
Tensor clip_grad_norm_per_rank_(const std::vector<Parameter>& parameters, double max_norm,
                                double norm_type = 2.0, bool error_if_nonfinite = false,
                                std::optional<bool> foreach = std::nullopt);
Tensor clip_grad_norm_per_rank_(const std::vector<Tensor>& parameters, double max_norm,
                                double norm_type = 2.0, bool error_if_nonfinite = false,
                                std::optional<bool> foreach = std::nullopt);
Tensor clip_grad_norm_per_rank_(const std::vector<DTensor>& parameters, double max_norm,
                                double norm_type = 2.0, bool error_if_nonfinite = false,
                                std::optional<bool> foreach = std::nullopt);

}  // namespace tessera::nn::utils
