// Gradients that are still per-rank terms (the gradient of a DTensor placed Partial).
//
// PyTorch keeps a DTensor gradient Partial until something needs it otherwise: the input gradient
// of a column-parallel matmul is a sum of per-rank terms, and it is the redistribution that made
// that input (a reduce_scatter back to a sequence shard, an all_reduce to Replicate) or the leaf
// (a Partial .grad) that combines them. The engine carries that state beside every gradient; the
// dtensor layer, which owns meshes, says how terms combine (TermMesh), and each node says what it
// does with terms that reach it (PartialPolicy):
//   - Combine (every node unless told otherwise): the terms are combined first, since the node's
//     backward may differ between ranks (a user's local computation, a sharded op);
//   - PassThrough: a DTensor op whose output is Replicate on some mesh dims runs the same linear
//     backward on every rank of those dims, so terms over them pass on to its inputs' gradients;
//   - Consume: the node takes the terms as they are (apply_partial): DTensor redistribution, the
//     reads that start terms, a DTensor leaf's accumulator.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/tensor.hpp"

namespace tessera::autograd {

// A mesh dim over which a gradient's ranks hold terms still to be combined, and how.
struct PartialDim {
  int64_t mesh_dim = 0;
  bool average = false;  // the terms' mean (Partial("avg")) rather than their sum
  bool operator==(const PartialDim&) const = default;
};

// One mesh's way of combining per-rank gradient terms (implemented by the dtensor layer).
class TermMesh {
 public:
  virtual ~TermMesh() = default;
  // `grad` with its terms over `dims` combined, the same on every rank of them (communicates).
  virtual Tensor combine(const Tensor& grad, const std::vector<PartialDim>& dims) const = 0;
  // A gradient whose value is the same on every rank of `dims`, written as terms over them that
  // combine to it (no communication; PyTorch's Replicate -> Partial).
  virtual Tensor as_terms(const Tensor& grad, const std::vector<PartialDim>& dims) const = 0;
  virtual bool same_mesh(const TermMesh& other) const = 0;
};

// The terms state of one gradient: none (an ordinary gradient) or terms over `dims` of `mesh`.
struct PartialGrad {
  std::shared_ptr<const TermMesh> mesh;
  std::vector<PartialDim> dims;  // sorted by mesh dim; empty for an ordinary gradient

  bool empty() const { return dims.empty(); }
  bool same_as(const PartialGrad& other) const;
};

// What a node does with terms that reach it (see the top of this file).
struct PartialPolicy {
  enum class Kind { Combine, PassThrough, Consume };
  Kind kind = Kind::Combine;
  std::shared_ptr<const TermMesh> mesh;  // PassThrough: the mesh of `replicated`
  uint64_t replicated = 0;               // PassThrough: bit i set = mesh dim i passes terms through
};

// `grad` with the terms of `partial` over the dims `keep` does not keep combined; `partial` is
// left with the kept ones. Keeps nothing when `keep` is null.
Tensor combine_except(Tensor grad, PartialGrad& partial, const PartialPolicy* keep);

// The sum of two gradients for one slot. Terms over the same dims add as they are; where one side
// has terms over a dim the other has not, the other is written as terms too (as PyTorch adds a
// Replicate gradient to a Partial one); across meshes, or a sum against a mean, both are combined.
void add_gradient(Tensor& slot, PartialGrad& slot_partial, Tensor grad, PartialGrad partial);

}  // namespace tessera::autograd
