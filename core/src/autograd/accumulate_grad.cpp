#include "autograd/accumulate_grad.hpp"

#include "tessera/ops.hpp"

namespace tessera::autograd {

AccumulateGrad::AccumulateGrad(std::shared_ptr<AutogradMeta> leaf, InputMeta meta)
    : Node("AccumulateGrad", 1), leaf_(std::move(leaf)), leaf_input_meta_(std::move(meta)) {}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>& grads) {
  accumulate_into(leaf_->grad, grads[0]);
  return {};
}

void accumulate_into(Tensor& kept, const Tensor& incoming) {
  kept = kept.defined() ? add(kept, incoming) : incoming.clone();
}

bool is_accumulator(const Node& node) { return dynamic_cast<const AccumulateGrad*>(&node) != nullptr; }

}  // namespace tessera::autograd
