#include "autograd/accumulate_grad.hpp"

#include "tessera/ops.hpp"

namespace tessera::autograd {

AccumulateGrad::AccumulateGrad(std::shared_ptr<AutogradMeta> leaf, InputMeta meta)
    : Node("AccumulateGrad", 1), leaf_(std::move(leaf)), leaf_input_meta_(std::move(meta)) {}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>& grads) {
  Tensor& incoming = grads[0];
  // The first gradient is copied: the one that arrives may be another leaf's too (a + b hands
  // both the same tensor) or the caller's seed, and grad() must be this leaf's own to modify.
  // Later ones are added out of place, so a grad() handle taken earlier keeps its values.
  leaf_->grad = leaf_->grad.defined() ? add(leaf_->grad, incoming) : incoming.clone();
  return {};
}

bool is_accumulator(const Node& node) { return dynamic_cast<const AccumulateGrad*>(&node) != nullptr; }

}  // namespace tessera::autograd
