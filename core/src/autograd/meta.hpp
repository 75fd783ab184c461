// The autograd state of one tensor (PyTorch: AutogradMeta), held by its TensorImpl or
// LocalTensorImpl so that every handle to the tensor shares it.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tessera/tensor.hpp"

namespace tessera::autograd {

class Node;

struct AutogradMeta {
  bool requires_grad = false;     // set by the user on a leaf; a non-leaf requires grad through grad_fn
  bool retains_grad = false;      // a non-leaf that keeps its gradient (retain_grad)
  Tensor grad;                    // what backward accumulated
  std::shared_ptr<Node> grad_fn;  // the recorded op that made this tensor; null for a leaf
  uint32_t output_nr = 0;         // which of grad_fn's outputs this tensor is
  // The node that accumulates into `grad`, while a graph holds it (made on first use).
  std::weak_ptr<Node> grad_accumulator;

  // The local tensor of a DTensor leaf (distribute_tensor, DTensor::set_requires_grad): gradient
  // contributions that are per-rank partial sums over some mesh dims may stay pending there, as
  // PyTorch leaves a Replicate parameter's gradient Partial until it is used.
  bool dtensor_leaf = false;
  struct PendingGrad {
    // What the ranks' values still have to be reduced over: (mesh dim, by mean rather than sum).
    std::vector<std::pair<int64_t, bool>> reductions;
    Tensor value;  // this rank's contribution, laid out like `grad`
  };
  std::vector<PendingGrad> pending_grads;
};

// Where a TensorImpl or LocalTensorImpl keeps its AutogradMeta. Empty until autograd needs it. A
// copied impl is a new tensor (an internal copy of a view), so the copy starts empty.
class AutogradSlot {
 public:
  AutogradSlot() = default;
  AutogradSlot(const AutogradSlot&) {}
  // Assigning keeps this slot's own state, so assigning a slot to itself is harmless.
  // NOLINTNEXTLINE(bugprone-unhandled-self-assignment)
  AutogradSlot& operator=(const AutogradSlot&) { return *this; }

  AutogradMeta* get() const { return meta_.get(); }
  const std::shared_ptr<AutogradMeta>& ensure() const {
    if (!meta_) meta_ = std::make_shared<AutogradMeta>();
    return meta_;
  }

 private:
  mutable std::shared_ptr<AutogradMeta> meta_;
};

// The tensor's autograd state, or null when it never had any.
AutogradMeta* meta_of(const Tensor& t);
// The tensor's autograd state, made when missing.
const std::shared_ptr<AutogradMeta>& ensure_meta(const Tensor& t);

// Whether t takes part in recording: it requires grad (as a leaf or through its grad_fn).
inline bool requires_grad(const Tensor& t) {
  const AutogradMeta* meta = meta_of(t);
  return meta != nullptr && (meta->requires_grad || meta->grad_fn != nullptr);
}

}  // namespace tessera::autograd
