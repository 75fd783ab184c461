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
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "autograd/meta.hpp"
#include "autograd/node.hpp"
#include "autograd/saved_tensor.hpp"
#include "tessera/autograd.hpp"

namespace tessera::autograd {

// The inputs are asked first: most ops see none that requires grad and then skip the grad-mode
// lookup (a thread-local read behind a call).
template <class... T>
bool any_requires_grad(const T&... tensors) {
  return (requires_grad(tensors) || ...) && is_grad_enabled();
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

// Whether an output is one of the inputs (an op that returned its argument, like to() of the same
// dtype): such an output is left as it is, with no node.
bool returns_an_input(std::span<const Tensor> inputs, std::span<const Tensor> outputs);
// Makes `node` the grad_fn of `outputs`, with an edge to each input.
void connect(const std::shared_ptr<Node>& node, std::span<const Tensor> inputs,
             std::span<const Tensor> outputs);

// Makes a node of class N (built from `args`) the grad_fn of `outputs`, unless an output is one of
// the inputs: no node then (it would become that input's own grad_fn, a cycle through its
// accumulator).
template <class N, class... Args>
void record_node_of(std::span<const Tensor> inputs, std::span<const Tensor> outputs, Args&&... args) {
  if (returns_an_input(inputs, outputs)) return;
  connect(std::make_shared<N>(std::forward<Args>(args)...), inputs, outputs);
}

template <class Backward>
void record_node(const char* name, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                 Backward&& backward) {
  record_node_of<FunctionNode<std::decay_t<Backward>>>(inputs, outputs, name, outputs.size(),
                                                       std::forward<Backward>(backward));
}

// Makes a node running `backward` the grad_fn of `outputs`, with an edge to each input: `backward`
// takes the outputs' gradients (std::vector<Tensor>&) and returns one gradient per input, in order.
template <class Backward>
void record(const char* name, std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> outputs,
            Backward&& backward) {
  record_node(name, std::span(inputs.begin(), inputs.size()), std::span(outputs.begin(), outputs.size()),
              std::forward<Backward>(backward));
}
template <class Backward>
void record(const char* name, const std::vector<Tensor>& inputs, std::initializer_list<Tensor> outputs,
            Backward&& backward) {
  record_node(name, inputs, std::span(outputs.begin(), outputs.size()), std::forward<Backward>(backward));
}
template <class Backward>
void record(const char* name, std::initializer_list<Tensor> inputs, const std::vector<Tensor>& outputs,
            Backward&& backward) {
  record_node(name, std::span(inputs.begin(), inputs.size()), outputs, std::forward<Backward>(backward));
}

// The shape to sum an input's gradient back to when the op broadcast it (its shape differs from
// the output's); nullopt when it did not, which is the common case and costs nothing to keep.
std::optional<SymShape> broadcast_from(const Tensor& input, const Tensor& out);
// Sums `grad` down to `shape` (undoing broadcasting); per rank for a local gradient or shape.
Tensor sum_to(const Tensor& grad, const SymShape& shape);
inline Tensor sum_to(const Tensor& grad, const std::optional<SymShape>& shape) {
  return shape ? sum_to(grad, *shape) : grad;
}

// An in-place write to a tensor that requires grad cannot be differentiated: an Error naming
// `op` and the out-of-place way, unless grad mode is off (as in an optimizer step).
void check_inplace(const Tensor& t, const char* op, const char* instead);

}  // namespace tessera::autograd
