// Reverse-mode automatic differentiation (PyTorch: torch.autograd).
//
// Ops on tensors that require grad record how their outputs were made; backward() walks that
// record from an output back to the leaves (tensors the user marked with set_requires_grad) and
// accumulates d(output)/d(leaf) into each leaf's grad(). It works the same on dense tensors and on
// local tensors: a local tensor's graph is one graph whose values are per rank, and its gradient is
// a local tensor over the same ranks. A plain tensor used with local ones gets a local gradient too
// (each rank's contribution), as every rank's program used it.
//
// Grad mode is per thread: NoGradGuard turns recording off on this thread until it goes out of
// scope. Backward itself records nothing (there are no higher-order gradients).
#pragma once

#include <vector>

#include "tessera/tensor.hpp"

namespace tessera {

// Whether ops on this thread record for autograd (true unless a NoGradGuard is alive).
bool is_grad_enabled();

// Turns recording off on this thread for its lifetime (PyTorch: torch::NoGradGuard).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Sets grad mode on this thread for its lifetime (PyTorch: torch::AutoGradMode).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

namespace autograd {

// Accumulates the gradients of `tensors` (seeded with `grad_tensors`; a one-element tensor may
// omit its seed, which is then 1) into the grad() of every leaf they depend on. Without
// retain_graph the graph's saved values are freed, and a second backward through it is an error.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              bool retain_graph = false);

// The gradients of `outputs` with respect to `inputs`, returned instead of accumulated (no leaf's
// grad() changes). An input the outputs do not depend on is an error unless allow_unused, which
// gives an undefined tensor for it.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool allow_unused = false);

}  // namespace autograd
}  // namespace tessera
