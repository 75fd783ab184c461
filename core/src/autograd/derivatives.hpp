// What each differentiable op records: called by the op (only when autograd::any_requires_grad of
// its inputs), after computing `out` untracked. One file per op family defines them, next to the
// backward formulas (PyTorch: derivatives.yaml).
#pragma once

#include <cstring>
#include <functional>
#include <vector>

#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"

namespace tessera::autograd {

// Whether an op recorded under the name `op` is `name` (the recorders dispatch on the op's name).
inline bool is(const char* op, const char* name) { return std::strcmp(op, name) == 0; }

// pointwise_derivatives.cpp: "add", "sub", "mul", "div", "pow", "maximum", "minimum" and the
// unary ops of ops.hpp; the scalar form with the scalar first or second.
void record_binary(const char* op, const Tensor& a, const Tensor& b, const Tensor& out);
void record_binary_scalar(const char* op, const Tensor& t, const Scalar& s, bool scalar_first,
                          const Tensor& out);
void record_unary(const char* op, const Tensor& a, const Tensor& out);
// An op whose gradient passes through unchanged (clone, contiguous, to): the engine casts it back
// to the input's dtype.
void record_identity(const char* name, const Tensor& a, const Tensor& out);

// reduction_derivatives.cpp: "sum", "mean", "prod", "max", "min".
// The output's own shape says where the reduced dims were, so keepdim is not needed.
void record_reduction(const char* op, const Tensor& a, const std::vector<int64_t>& dims, const Tensor& out);

// linalg_derivatives.cpp: "mm", "bmm", "matmul"; softmax and log_softmax.
void record_matmul(const char* op, const Tensor& a, const Tensor& b, const Tensor& out);
void record_softmax(bool log, const Tensor& a, int64_t dim, const Tensor& out);

// view_derivatives.cpp.
// view, reshape, flatten, squeeze, unsqueeze: the gradient takes back the input's shape.
void record_reshape(const char* name, const Tensor& a, const Tensor& out);
void record_transpose(const Tensor& a, int64_t dim0, int64_t dim1, const Tensor& out);
void record_permute(const Tensor& a, const std::vector<int64_t>& dims, const Tensor& out);
void record_flip(const Tensor& a, const std::vector<int64_t>& dims, const Tensor& out);
void record_expand(const Tensor& a, const Tensor& out);
// narrow, slice, select: `part` takes the same part of a tensor shaped like `a`; the gradient is
// zero outside it.
void record_part(const char* name, const Tensor& a, const Tensor& out,
                 std::function<Tensor(const Tensor&)> part);

// join_split_derivatives.cpp.
void record_cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out);
void record_stack(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out);
// split and chunk: the outputs are consecutive parts of `a` along `dim`.
void record_split(const char* name, const Tensor& a, int64_t dim, const std::vector<Tensor>& outputs);

// norm_derivatives.cpp: layer_norm (`layer`) and rms_norm through their fused kernels. `inputs` are
// x, then the weight and the bias when there are; mean (undefined for rms_norm) and rstd are the
// forward kernel's per-row statistics, which the backward kernel takes.
void record_norm(bool layer, const std::vector<Tensor>& inputs, bool has_weight, bool has_bias,
                 size_t normalized_ndim, const Tensor& out, const Tensor& mean, const Tensor& rstd);

// indexing_derivatives.cpp: gather (index_select and embedding are gathers) and scatter_add, whose
// src is already narrowed to index's shape.
void record_gather(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& out);
void record_scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src,
                        const Tensor& out);

}  // namespace tessera::autograd
