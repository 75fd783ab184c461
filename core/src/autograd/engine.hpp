// Runs a backward pass over the recorded graph (PyTorch: the autograd engine).
#pragma once

#include <map>
#include <vector>

#include "autograd/node.hpp"

namespace tessera::autograd {

// Where autograd::grad wants a gradient instead of accumulating it: input `input_nr` of `node`.
struct CaptureSlot {
  Node* node;
  uint32_t input_nr;
  bool operator<(const CaptureSlot& o) const {
    return node != o.node ? node < o.node : input_nr < o.input_nr;
  }
};

// Sends `seeds[i]` into `roots[i]` and runs every node the roots reach, each once all gradients
// for it have arrived, latest-recorded first (so the order, and the bits, never vary). Without
// `captures` leaves accumulate; with them the captured gradients are stored there instead and no
// leaf is touched.
void run_backward(const std::vector<Edge>& roots, const std::vector<Tensor>& seeds, bool retain_graph,
                  std::map<CaptureSlot, Tensor>* captures = nullptr);

// Whether the backward running on this thread captures gradients (autograd::grad) rather than
// accumulating them: nodes that would keep a gradient pending hand it on instead.
bool capturing_gradients();

// A gradient made to fit the input it is for: its dtype, and spread over the ranks of a local
// input when it is plain.
Tensor fit_to_input(Tensor grad, const InputMeta& meta);

}  // namespace tessera::autograd
