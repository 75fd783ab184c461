// One recorded op in the autograd graph (PyTorch: torch::autograd::Node): given the gradients of
// its outputs, it computes the gradients of its inputs and passes each along an edge to the node
// that made that input.
#pragma once

#include <cstdint>
#include <optional>
#include <memory>
#include <vector>

#include "autograd/meta.hpp"
#include "autograd/partial_grad.hpp"
#include "tessera/rank_map.hpp"
#include "tessera/tensor.hpp"

namespace tessera::autograd {

class Node;

// Input `input_nr` of `node`; an edge without a node leads to an input that needs no gradient.
struct Edge {
  std::shared_ptr<Node> node;
  uint32_t input_nr = 0;
};

// What a gradient for an input must look like; the engine casts to the dtype and spreads a plain
// gradient over the ranks of a local input.
struct InputMeta {
  DType dtype = kFloat32;
  bool local = false;
  RankSet ranks;  // of a local input
};

class Node {
 public:
  Node(const char* name, size_t num_outputs);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // One gradient per output in (undefined where no gradient reached that output; every slot is
  // defined for a node with one output); one gradient per next edge out (undefined for "none").
  virtual std::vector<Tensor> apply(std::vector<Tensor>& grads) = 0;
  // For a node whose policy is Consume: `partial` holds the terms state of the outputs'
  // gradients, and on return that of the gradients it gives its inputs.
  virtual std::vector<Tensor> apply_partial(std::vector<Tensor>& grads, PartialGrad& partial);
  // Frees what the node saved for backward (marking it released when that leaves apply unable
  // to run: a second backward through it is then an error).
  virtual void release_saved() {}

  const char* name() const { return name_; }
  uint64_t sequence_nr() const { return sequence_nr_; }
  size_t num_outputs() const { return num_outputs_; }

  // Per input: where its gradient goes, and what that gradient must look like.
  struct NextEdge {
    Edge edge;
    InputMeta meta;
  };
  std::vector<NextEdge> next_edges;
  // Non-leaf outputs that keep their gradient (retain_grad), by output number.
  std::vector<std::weak_ptr<AutogradMeta>> retained;
  bool released = false;  // release_saved ran: a second backward through here is an error
  // What this node does with gradients that are still per-rank terms (partial_grad.hpp).
  PartialPolicy partial_policy;

 private:
  const char* name_;
  size_t num_outputs_;
  uint64_t sequence_nr_;  // creation order on this thread: later nodes run first in backward
};

// A node whose backward is a function object (the usual case: one per op, see the *_derivatives
// files); node and function share one allocation.
template <class Backward>
class FunctionNode final : public Node {
 public:
  FunctionNode(const char* name, size_t num_outputs, Backward backward)
      : Node(name, num_outputs), backward_(std::move(backward)) {}
  std::vector<Tensor> apply(std::vector<Tensor>& grads) override { return (*backward_)(grads); }
  void release_saved() override {
    backward_.reset();
    released = true;
  }

 private:
  std::optional<Backward> backward_;
};

// The edge along which a gradient for `t` travels: to its grad_fn, to the accumulator of a leaf
// that requires grad, or nowhere.
Edge gradient_edge(const Tensor& t);
// The sequence number the next node recorded on this thread will get: the nodes an op records
// are those numbered from this value, read before it, on.
uint64_t next_node_number();
InputMeta input_meta_of(const Tensor& t);

}  // namespace tessera::autograd
