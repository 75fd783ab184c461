#include "autograd/accumulate_grad.hpp"

#include "tensor/memory_accounting.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {
namespace {

// The memory counters' category for what a leaf keeps: its gradient, and the DTensor
// contributions still to be reduced into it.
const std::string kGradients = "gradients";

}  // namespace

AccumulateGrad::AccumulateGrad(std::shared_ptr<AutogradMeta> leaf, InputMeta meta)
    : Node("AccumulateGrad", 1), leaf_(std::move(leaf)), leaf_input_meta_(std::move(meta)) {
  partial_policy.kind = PartialPolicy::Kind::Consume;
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>& grads) {
  accumulate_into(leaf_->grad, grads[0]);
  return {};
}

std::vector<Tensor> AccumulateGrad::apply_partial(std::vector<Tensor>& grads, PartialGrad& partial) {
  if (partial.empty() || !leaf_->dtensor_leaf) return Node::apply_partial(grads, partial);
  std::vector<std::pair<int64_t, bool>> reductions;
  for (const PartialDim& d : partial.dims) reductions.emplace_back(d.mesh_dim, d.average);
  partial = {};
  for (AutogradMeta::PendingGrad& pending : leaf_->pending_grads)
    if (pending.reductions == reductions) {
      pending.value = pending.value + grads[0];
      detail::tag_memory(pending.value, kGradients);
      return {};
    }
  leaf_->pending_grads.push_back({std::move(reductions), grads[0].clone()});
  detail::tag_memory(leaf_->pending_grads.back().value, kGradients);
  return {};
}

void accumulate_into(Tensor& kept, const Tensor& incoming) {
  kept = kept.defined() ? add(kept, incoming) : incoming.clone();
  detail::tag_memory(kept, kGradients);
}

bool is_accumulator(const Node& node) { return dynamic_cast<const AccumulateGrad*>(&node) != nullptr; }

}  // namespace tessera::autograd
