#include "dtensor/grad_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <span>
#include <utility>

#include "autograd/accumulate_grad.hpp"
#include "autograd/engine.hpp"
#include "autograd/record.hpp"
#include "dtensor/redistribute.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"

namespace tessera::dtensor {

Placements grad_placements(const Placements& placements) {
  Placements grad = placements;
  for (Placement& p : grad)
    if (p.is_partial()) p = Replicate();
  return grad;
}

namespace {

using autograd::PartialDim;
using autograd::PartialGrad;

// Combines gradient terms over dims of one DeviceMesh (the dtensor side of autograd's TermMesh).
class MeshTerms final : public autograd::TermMesh {
 public:
  explicit MeshTerms(const DeviceMesh& mesh) : mesh_(mesh) {}

  Tensor combine(const Tensor& grad, const std::vector<PartialDim>& dims) const override {
    Tensor out = grad.clone();
    for (const PartialDim& d : dims)
      all_reduce_along(out, mesh_, static_cast<size_t>(d.mesh_dim),
                       d.average ? ReduceOp::AVG : ReduceOp::SUM);
    return out;
  }

  // As redistribution's Replicate -> Partial: a float sum's terms are value / n on every member
  // (PyTorch's split), an integer sum's the value on the group's first member and zero elsewhere; a
  // mean's terms are the value itself.
  Tensor as_terms(const Tensor& grad, const std::vector<PartialDim>& dims) const override {
    Tensor out = grad;
    for (const PartialDim& d : dims) {
      if (d.average) continue;
      const size_t i = static_cast<size_t>(d.mesh_dim);
      const int64_t members = mesh_.size(d.mesh_dim);
      out = map_ranks(out, mesh_, [&](int, const std::vector<int64_t>& coord, const Tensor& shard) {
        if (is_floating(shard.dtype())) return shard / members;
        return coord[i] == 0 ? shard.clone() : zeros_like(shard);
      });
    }
    return out;
  }

  bool same_mesh(const autograd::TermMesh& other) const override {
    const auto* o = dynamic_cast<const MeshTerms*>(&other);
    return o != nullptr && (o == this || o->mesh_ == mesh_);
  }

 private:
  DeviceMesh mesh_;
};

// Placements with the dims that hold gradient terms made Partial.
Placements with_terms(Placements layout, const PartialGrad& partial) {
  for (const PartialDim& d : partial.dims)
    layout[static_cast<size_t>(d.mesh_dim)] = Partial(d.average ? "avg" : "sum");
  return layout;
}

// Redistribution's backward: the gradient, with whatever terms it holds, laid out back as the
// redistributed tensor's gradient (terms over a dim that was a shard reduce-scatter into it,
// terms over a replicated dim all-reduce).
class RedistributeBackward final : public autograd::Node {
 public:
  RedistributeBackward(const DeviceMesh& mesh, Shape shape, Placements grad_from, Placements grad_to)
      : Node("RedistributeBackward", 1),
        mesh_(mesh),
        shape_(std::move(shape)),
        grad_from_(std::move(grad_from)),
        grad_to_(std::move(grad_to)) {
    partial_policy.kind = autograd::PartialPolicy::Kind::Consume;
  }
  std::vector<Tensor> apply(std::vector<Tensor>& grads) override {
    PartialGrad none;
    return apply_partial(grads, none);
  }
  std::vector<Tensor> apply_partial(std::vector<Tensor>& grads, PartialGrad& partial) override {
    if (!partial.empty() && !MeshTerms(mesh_).same_mesh(*partial.mesh)) {
      grads[0] = autograd::combine_except(std::move(grads[0]), partial, nullptr);
    }
    const Placements source = with_terms(grad_to_, partial);
    partial = {};
    return {redistribute_local(DTensor(grads[0], mesh_, source, shape_), grad_from_, false)};
  }

 private:
  DeviceMesh mesh_;
  Shape shape_;
  Placements grad_from_, grad_to_;
};

// The read of a Replicate input by an op whose output is sharded or partial on some mesh dims:
// there the input's gradient arrives as per-rank terms (each rank's contribution), and it stays
// so, as in PyTorch, until a redistribution or a leaf takes it.
class StartTerms final : public autograd::Node {
 public:
  StartTerms(std::shared_ptr<const MeshTerms> mesh, std::vector<PartialDim> dims)
      : Node("PartialGradBackward", 1), mesh_(std::move(mesh)), dims_(std::move(dims)) {
    partial_policy.kind = autograd::PartialPolicy::Kind::Consume;
  }
  std::vector<Tensor> apply(std::vector<Tensor>& grads) override {
    PartialGrad none;
    return apply_partial(grads, none);
  }
  std::vector<Tensor> apply_partial(std::vector<Tensor>& grads, PartialGrad& partial) override {
    if (!partial.empty() && !mesh_->same_mesh(*partial.mesh))
      grads[0] = autograd::combine_except(std::move(grads[0]), partial, nullptr);
    std::vector<PartialDim> dims = partial.dims;
    dims.insert(dims.end(), dims_.begin(), dims_.end());
    std::sort(dims.begin(), dims.end(),
              [](const PartialDim& a, const PartialDim& b) { return a.mesh_dim < b.mesh_dim; });
    partial = {mesh_, std::move(dims)};
    return {grads[0]};
  }

 private:
  std::shared_ptr<const MeshTerms> mesh_;
  std::vector<PartialDim> dims_;
};

uint64_t replicated_dims(const Placements& placements) {
  uint64_t mask = 0;
  for (size_t m = 0; m < placements.size() && m < 64; ++m)
    if (placements[m].is_replicate()) mask |= uint64_t{1} << m;
  return mask;
}

}  // namespace

Tensor differentiable_redistribute(const DTensor& from, const Placements& to, bool allow_partial_targets) {
  const Tensor& input = from.to_local();
  return autograd::differentiable([&] { return redistribute_local(from, to, allow_partial_targets); },
                                  [&](const Tensor& out) {
                                    autograd::record_node_of<RedistributeBackward>(
                                        std::span(&input, 1), std::span(&out, 1), from.device_mesh(),
                                        from.shape(), grad_placements(from.placements()),
                                        grad_placements(to));
                                  },
                                  input);
}

DTensor reduced_in_backward(const DTensor& input, const Placements& output_placements) {
  const Tensor& local = input.to_local();
  if (!autograd::any_requires_grad(local)) return input;
  std::vector<PartialDim> terms;  // the mesh dims over which the input's gradient arrives as terms
  for (size_t m = 0; m < output_placements.size(); ++m) {
    const Placement& out = output_placements[m];
    if (!input.placements()[m].is_replicate() || out.is_replicate()) continue;
    if (out.is_partial() && out.reduce_op() != "sum" && out.reduce_op() != "avg")
      throw Error(
          fmt::format("autograd: an op whose output is {} on mesh dim {} cannot be differentiated (only "
                      "sum and avg pending reductions are linear); redistribute to Replicate first",
                      out.to_string(), m));
    terms.push_back({static_cast<int64_t>(m), out.is_partial() && out.reduce_op() == "avg"});
  }
  if (terms.empty()) return input;
  // The same values under a new handle, so that the terms start at a node of their own.
  const Tensor alias = local.detach();
  autograd::record_node_of<StartTerms>(std::span(&local, 1), std::span(&alias, 1),
                                       std::make_shared<MeshTerms>(input.device_mesh()), std::move(terms));
  return DTensor(alias, input.device_mesh(), input.placements(), input.shape());
}

void pass_terms_through(const Tensor& output, const DeviceMesh& mesh, const Placements& placements,
                        uint64_t first_node) {
  const autograd::AutogradMeta* meta = autograd::meta_of(output);
  if (meta == nullptr || meta->grad_fn == nullptr) return;
  const uint64_t replicated = replicated_dims(placements);
  if (replicated == 0) return;
  const auto mesh_terms = std::make_shared<const MeshTerms>(mesh);
  std::vector<autograd::Node*> stack = {meta->grad_fn.get()};
  while (!stack.empty()) {
    autograd::Node* node = stack.back();
    stack.pop_back();
    if (node->sequence_nr() < first_node ||
        node->partial_policy.kind != autograd::PartialPolicy::Kind::Combine ||
        autograd::is_accumulator(*node))
      continue;
    node->partial_policy = {autograd::PartialPolicy::Kind::PassThrough, mesh_terms, replicated};
    for (const auto& next : node->next_edges)
      if (next.edge.node) stack.push_back(next.edge.node.get());
  }
}

DTensor op_output(const Tensor& local, const DeviceMesh& mesh, const Placements& placements,
                  const Shape& shape, uint64_t first_node) {
  pass_terms_through(local, mesh, placements, first_node);
  return DTensor(local, mesh, placements, shape);
}

}  // namespace tessera::dtensor
