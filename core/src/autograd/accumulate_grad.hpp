// The node at the end of every path to a leaf: adds the gradient that arrives into the leaf's
// grad() (PyTorch: AccumulateGrad).
#pragma once

#include <memory>

#include "autograd/node.hpp"

namespace tessera::autograd {

class AccumulateGrad final : public Node {
 public:
  AccumulateGrad(std::shared_ptr<AutogradMeta> leaf, InputMeta meta);
  std::vector<Tensor> apply(std::vector<Tensor>& grads) override;
  // A DTensor leaf keeps terms pending (shown as a Partial grad(), combined once when used);
  // any other leaf gets the combined gradient.
  std::vector<Tensor> apply_partial(std::vector<Tensor>& grads, PartialGrad& partial) override;
  const InputMeta& leaf_meta() const { return leaf_input_meta_; }

 private:
  std::shared_ptr<AutogradMeta> leaf_;
  InputMeta leaf_input_meta_;
};

// Adds `incoming` into a kept gradient: the first one is copied (it may be another tensor's too,
// or the caller's seed, and a kept gradient must be its owner's to modify); later ones are added
// out of place, so a handle taken earlier keeps its values.
void accumulate_into(Tensor& kept, const Tensor& incoming);

// Whether `node` is a leaf's accumulator (autograd::grad captures instead of running those).
bool is_accumulator(const Node& node);

}  // namespace tessera::autograd
