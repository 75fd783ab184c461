// How an op takes part in autograd. Each differentiable op does
//
//   if (!autograd::any_requires_grad(a, b)) return forward();
//   Tensor out = autograd::untracked(forward);
//   autograd::record("MulBackward", {a, b}, {out}, backward);
//
// so that nothing is recorded (and nothing costs) unless an input requires grad and this thread
// records, and the ops the forward is built from do not record nodes of their own.
#pragma once

#include <initializer_list>
#include <vector>

#include "autograd/meta.hpp"
#include "autograd/node.hpp"
#include "autograd/saved_tensor.hpp"
#include "tessera/autograd.hpp"

namespace tessera::autograd {

template <class... T>
bool any_requires_grad(const T&... tensors) {
  return is_grad_enabled() && (requires_grad(tensors) || ...);
}
bool any_requires_grad(const std::vector<Tensor>& tensors);

template <class F>
auto untracked(F&& forward) {
  NoGradGuard off;
  return forward();
}

// Runs `forward`; when this thread records and an input requires grad, runs it untracked and
// hands the result to `record_output`, which records the op's node on it.
template <class Forward, class RecordOutput, class... Inputs>
auto differentiable(Forward&& forward, RecordOutput&& record_output, const Inputs&... inputs) {
  if (!any_requires_grad(inputs...)) return forward();
  auto out = untracked(forward);
  record_output(out);
  return out;
}

// Makes a node running `backward` the grad_fn of `outputs`, with an edge to each input (`backward`
// returns one gradient per input, in order). An output that is one of the inputs (an op that
// returned its argument, like to() of the same dtype) is left as it is.
void record(const char* name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            FunctionNode::Backward backward);

// Sums `grad` down to `shape` (undoing broadcasting); per rank for a local gradient or shape.
Tensor sum_to(const Tensor& grad, const SymShape& shape);

// An in-place write to a tensor that requires grad cannot be differentiated: an Error naming
// `op` and the out-of-place way, unless grad mode is off (as in an optimizer step).
void check_inplace(const Tensor& t, const char* op, const char* instead);

}  // namespace tessera::autograd
