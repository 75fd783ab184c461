// layer_norm and rms_norm through their fused kernels (sdk/KERNELS.md, "Normalisation"): one
// kernel call per shard for the forward (the output plus each row's statistics) and one for the
// backward, instead of the composite's chain of element-wise ops and reductions. norms.cpp uses
// these when the input's backend has the kernels and its composite otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/tensor.hpp"

namespace tessera::detail {

// The two normalisations, for the kernels' names and which statistics they keep.
enum class NormKind { kLayer, kRms };

// Whether the backend of x (of every rank's shard, for a local x) has the fused forward and
// backward kernels of `kind` for x's dtype, directly or through float32 for bfloat16/float16.
bool has_norm_kernels(NormKind kind, const Tensor& x);

// x normalised over its last `normalized_ndim` dims, which the caller has checked against the
// weight's and bias's shapes (either may be undefined; rms_norm has no bias). Differentiable: the
// backward kernel computes the gradients of x, the weight and the bias in one call.
Tensor fused_norm(NormKind kind, const Tensor& x, size_t normalized_ndim, const Tensor& weight,
                  const Tensor& bias, double eps);

// The backward kernel on dense (or local) tensors: the gradients of x, then of the weight and of
// the bias when `weight` is defined and `has_bias` (each shaped as normalized_shape, in the
// compute type: float64 for a float64 x, float32 otherwise). mean is undefined for rms_norm.
std::vector<Tensor> norm_backward(NormKind kind, const Tensor& grad, const Tensor& x, const Tensor& mean,
                                  const Tensor& rstd, const Tensor& weight, bool has_bias,
                                  size_t normalized_ndim);

}  // namespace tessera::detail
