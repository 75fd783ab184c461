// DTensor autograd: a DTensor's gradient is the gradient of its global value, laid out like the
// DTensor itself except that a pending reduction (Partial) becomes Replicate, as PyTorch's
// redistribute backward does (grad_placements). Every gradient that flows into a DTensor's local
// tensor has that layout, so the local tensors' autograd graph carries DTensor gradients without
// knowing about placements. Two pieces keep the invariant:
//   - redistribution is recorded, and its backward redistributes the gradient the other way;
//   - an op that reads a Replicate input on a mesh dim where its output is sharded or partial
//     computes per-rank contributions to that input's gradient: for an activation they are summed
//     over the mesh dim in backward (Megatron's "f": the all_reduce of the input gradient of a
//     column-parallel linear layer); for a DTensor leaf (a parameter) they stay pending, shown
//     as Partial by DTensor::grad() and reduced once when used, as in PyTorch.
#pragma once

#include "tessera/dtensor.hpp"

namespace tessera::dtensor {

// The layout of a gradient of a DTensor placed `placements`.
Placements grad_placements(const Placements& placements);

// redistribute_local, recorded when the local tensor requires grad.
Tensor differentiable_redistribute(const DTensor& from, const Placements& to, bool allow_partial_targets);

// `input` (an op's input, placed `input_placements`) as the op reads it when its output is placed
// `output_placements`: the same values; in backward the gradient is reduced over each mesh dim
// where the input is Replicate and the output is not.
DTensor reduced_in_backward(const DTensor& input, const Placements& output_placements);

}  // namespace tessera::dtensor
