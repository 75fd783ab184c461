// DTensor autograd: a DTensor's gradient is the gradient of its global value, laid out like the
// DTensor itself except that a pending reduction (Partial) becomes Replicate, as PyTorch's
// redistribute backward does (grad_placements) -- or, where PyTorch keeps it Partial, held as
// per-rank terms that autograd carries beside the gradient (autograd/partial_grad.hpp):
//   - an op that reads a Replicate input on a mesh dim where its output is sharded or partial
//     gives that input's gradient as terms over the mesh dim (each rank's contribution);
//   - the terms pass through every DTensor op whose output is Replicate there (its backward is the
//     same linear map on each rank of the dim), and are combined by the redistribution that made
//     the input (terms -> Shard is a reduce_scatter, terms -> Replicate an all_reduce), by a DTensor
//     leaf (its grad() shows Partial, reduced once when used), or by anything else that needs the
//     whole gradient;
//   - redistribution is recorded, and its backward redistributes the gradient the other way.
// So a sequence-parallel block's backward issues one all_gather and one reduce_scatter, as in
// PyTorch, instead of reducing each activation gradient where it is read.
#pragma once

#include "tessera/dtensor.hpp"

namespace tessera::dtensor {

// The layout of a gradient of a DTensor placed `placements`.
Placements grad_placements(const Placements& placements);

// redistribute_local, recorded when the local tensor requires grad.
Tensor differentiable_redistribute(const DTensor& from, const Placements& to, bool allow_partial_targets);

// `input` as the op reads it when its output is placed `output_placements`: the same values; in
// backward its gradient arrives as terms over each mesh dim where the input is Replicate and the
// output is not.
DTensor reduced_in_backward(const DTensor& input, const Placements& output_placements);

// Marks the nodes an op recorded (numbered from `first_node` on, reached from `output`) as
// passing gradient terms through on the mesh dims where the op's output is Replicate.
void pass_terms_through(const Tensor& output, const DeviceMesh& mesh, const Placements& placements,
                        uint64_t first_node);
// The DTensor an op made from its local result: pass_terms_through, then the DTensor.
DTensor op_output(const Tensor& local, const DeviceMesh& mesh, const Placements& placements,
                  const Shape& shape, uint64_t first_node);

}  // namespace tessera::dtensor
