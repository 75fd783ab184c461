#include "autograd/node.hpp"

#include "autograd/accumulate_grad.hpp"

namespace tessera::autograd {
namespace {
// Per thread, as graphs are built by the thread that runs the program; only the order matters.
thread_local uint64_t next_sequence_nr = 0;
}  // namespace

Node::Node(const char* name, size_t num_outputs)
    : name_(name), num_outputs_(num_outputs), sequence_nr_(next_sequence_nr++) {}

std::vector<Tensor> Node::apply_partial(std::vector<Tensor>& grads, PartialGrad& partial) {
  for (Tensor& g : grads)
    if (g.defined()) {
      PartialGrad each = partial;
      g = combine_except(std::move(g), each, nullptr);
    }
  partial = {};
  return apply(grads);
}

uint64_t next_node_number() { return next_sequence_nr; }

InputMeta input_meta_of(const Tensor& t) {
  InputMeta meta;
  meta.dtype = t.dtype();
  meta.local = t.is_local();
  if (meta.local) meta.ranks = t.ranks();
  return meta;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* meta = meta_of(t);
  if (meta == nullptr) return {};
  if (meta->grad_fn) return {meta->grad_fn, meta->output_nr};
  if (!meta->requires_grad) return {};
  std::shared_ptr<Node> accumulator = meta->grad_accumulator.lock();
  if (!accumulator) {
    accumulator = std::make_shared<AccumulateGrad>(ensure_meta(t), input_meta_of(t));
    meta->grad_accumulator = accumulator;
  }
  return {accumulator, 0};
}

}  // namespace tessera::autograd
