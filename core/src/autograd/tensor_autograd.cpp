// Tensor's autograd methods and autograd::backward / autograd::grad.
#include <fmt/format.h>

#include <map>

#include "autograd/engine.hpp"
#include "autograd/meta.hpp"
#include "autograd/node.hpp"
#include "tensor/internal.hpp"
#include "tessera/autograd.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"

namespace tessera {
namespace {

using autograd::AutogradMeta;
using autograd::meta_of;

const Tensor& defined_or_throw(const Tensor& t, const char* op) {
  if (!t.defined()) throw Error(fmt::format("{}: the tensor is undefined (default-constructed)", op));
  return t;
}

bool one_element_per_rank(const Tensor& t) {
  if (!t.is_local()) return t.numel() == 1;
  for (const auto& [rank, shard] : t.shards())
    if (shard.numel() != 1) return false;
  return true;
}

// The gradient backward starts from for `t`: the caller's, checked, or 1 for a one-element tensor.
Tensor seed_for(const Tensor& t, const Tensor& given, size_t index) {
  if (!given.defined()) {
    if (!one_element_per_rank(t))
      throw Error(
          fmt::format("backward: a gradient can be created implicitly only for a tensor of one element (per "
                      "rank); tensor {} has shape {}: pass a gradient of that shape",
                      index, t.shape().to_string()));
    return ones_like(t);
  }
  if (!(given.shape() == t.shape()))
    throw Error(fmt::format("backward: the gradient for tensor {} has shape {}, but the tensor has shape {}",
                            index, given.shape().to_string(), t.shape().to_string()));
  return autograd::fit_to_input(given, autograd::input_meta_of(t));
}

std::vector<autograd::Edge> roots_of(const std::vector<Tensor>& tensors, const char* op) {
  std::vector<autograd::Edge> roots;
  for (size_t i = 0; i < tensors.size(); ++i) {
    defined_or_throw(tensors[i], op);
    autograd::Edge edge = autograd::gradient_edge(tensors[i]);
    if (!edge.node)
      throw Error(fmt::format(
          "{}: tensor {} does not require grad and has no grad_fn; mark the leaves it is made from "
          "with set_requires_grad(true) before the ops that use them (and outside NoGradGuard)",
          op, i));
    roots.push_back(std::move(edge));
  }
  return roots;
}

std::vector<Tensor> seeds_of(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grads,
                             const char* op) {
  if (!grads.empty() && grads.size() != tensors.size())
    throw Error(fmt::format("{}: {} gradients given for {} tensors; give one per tensor (or none)", op,
                            grads.size(), tensors.size()));
  std::vector<Tensor> seeds;
  for (size_t i = 0; i < tensors.size(); ++i)
    seeds.push_back(seed_for(tensors[i], grads.empty() ? Tensor() : grads[i], i));
  return seeds;
}

}  // namespace

bool Tensor::requires_grad() const {
  return autograd::requires_grad(defined_or_throw(*this, "requires_grad"));
}

Tensor& Tensor::set_requires_grad(bool requires_grad) {
  defined_or_throw(*this, "set_requires_grad");
  AutogradMeta* meta = meta_of(*this);
  if (meta != nullptr && meta->grad_fn != nullptr) {
    if (requires_grad) return *this;
    throw Error(
        fmt::format("set_requires_grad(false): the tensor is not a leaf (it was made by {}); use detach() to "
                    "get a tensor cut from the graph",
                    meta->grad_fn->name()));
  }
  if (requires_grad && !is_floating(dtype()))
    throw Error(
        fmt::format("set_requires_grad: only floating-point tensors can require grad, but this one is {}; "
                    "convert it with .to(kFloat32) first",
                    dtype_name(dtype())));
  if (!requires_grad && meta == nullptr) return *this;
  autograd::ensure_meta(*this)->requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const {
  const AutogradMeta* meta = meta_of(defined_or_throw(*this, "grad"));
  return meta ? meta->grad : Tensor();
}

Tensor& Tensor::set_grad(const Tensor& grad) {
  defined_or_throw(*this, "set_grad");
  if (grad.defined() && !(grad.shape() == shape()))
    throw Error(fmt::format("set_grad: the gradient has shape {}, but the tensor has shape {}",
                            grad.shape().to_string(), shape().to_string()));
  if (grad.defined() || meta_of(*this)) autograd::ensure_meta(*this)->grad = grad;
  return *this;
}

Tensor& Tensor::zero_grad(bool set_to_none) {
  AutogradMeta* meta = meta_of(defined_or_throw(*this, "zero_grad"));
  if (meta == nullptr) return *this;
  if (set_to_none) {
    meta->grad = Tensor();
    meta->pending_grads.clear();
    return *this;
  }
  NoGradGuard off;
  if (meta->grad.defined()) meta->grad.fill_(0);
  for (AutogradMeta::PendingGrad& pending : meta->pending_grads) pending.value.fill_(0);
  return *this;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  autograd::backward({*this}, gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{},
                     retain_graph);
}

bool Tensor::is_leaf() const {
  const AutogradMeta* meta = meta_of(defined_or_throw(*this, "is_leaf"));
  return meta == nullptr || meta->grad_fn == nullptr;
}

std::string Tensor::grad_fn_name() const {
  const AutogradMeta* meta = meta_of(defined_or_throw(*this, "grad_fn_name"));
  return meta && meta->grad_fn ? meta->grad_fn->name() : "";
}

Tensor& Tensor::retain_grad() {
  defined_or_throw(*this, "retain_grad");
  if (!autograd::requires_grad(*this))
    throw Error("retain_grad: the tensor does not require grad, so backward never reaches it");
  const std::shared_ptr<AutogradMeta>& meta = autograd::ensure_meta(*this);
  if (!meta->grad_fn) return *this;  // a leaf keeps its gradient anyway
  auto& retained = meta->grad_fn->retained;
  if (retained.size() <= meta->output_nr) retained.resize(meta->output_nr + 1);
  retained[meta->output_nr] = meta;
  return *this;
}

Tensor Tensor::detach() const {
  defined_or_throw(*this, "detach");
  if (local_) return local_tensor(shards());
  return Tensor(impl_->view(impl_->sizes(), impl_->strides(), impl_->offset(), "detach"));
}

int64_t Tensor::version() const {
  defined_or_throw(*this, "version");
  if (!local_) return impl_->storage()->version.load(std::memory_order_relaxed);
  int64_t total = 0;
  for (const auto& [rank, shard] : shards()) total += shard.version();
  return total;
}

namespace autograd {

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              bool retain_graph) {
  const std::vector<Edge> roots = roots_of(tensors, "backward");
  run_backward(roots, seeds_of(tensors, grad_tensors, "backward"), retain_graph);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph, bool allow_unused) {
  const std::vector<Edge> roots = roots_of(outputs, "autograd::grad");
  const std::vector<Edge> input_edges = roots_of(inputs, "autograd::grad (inputs)");
  std::map<CaptureSlot, Tensor> captures;
  for (const Edge& edge : input_edges)
    captures.emplace(CaptureSlot{edge.node.get(), edge.input_nr}, Tensor());
  run_backward(roots, seeds_of(outputs, grad_outputs, "autograd::grad"), retain_graph, &captures);
  std::vector<Tensor> grads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor g = captures.at({input_edges[i].node.get(), input_edges[i].input_nr});
    if (!g.defined() && !allow_unused)
      throw Error(
          fmt::format("autograd::grad: input {} was not used to compute the outputs; pass allow_unused=true "
                      "to get an undefined tensor for it",
                      i));
    grads.push_back(g.defined() ? fit_to_input(g, input_meta_of(inputs[i])) : g);
  }
  return grads;
}

}  // namespace autograd
}  // namespace tessera
