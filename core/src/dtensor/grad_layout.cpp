#include "dtensor/grad_layout.hpp"

#include <fmt/format.h>

#include "autograd/engine.hpp"
#include "autograd/record.hpp"
#include "dtensor/redistribute.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera::dtensor {

Placements grad_placements(const Placements& placements) {
  Placements grad = placements;
  for (Placement& p : grad)
    if (p.is_partial()) p = Replicate();
  return grad;
}

Tensor differentiable_redistribute(const DTensor& from, const Placements& to, bool allow_partial_targets) {
  const Tensor& input = from.to_local();
  return autograd::differentiable(
      [&] { return redistribute_local(from, to, allow_partial_targets); },
      [&](const Tensor& out) {
        const DeviceMesh mesh = from.device_mesh();
        const Shape shape = from.shape();
        const Placements grad_from = grad_placements(from.placements());
        const Placements grad_to = grad_placements(to);
        autograd::record("RedistributeBackward", {input}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
          return {redistribute_local(DTensor(grads[0], mesh, grad_to, shape), grad_from, false)};
        });
      },
      input);
}

namespace {

using Reductions = std::vector<std::pair<int64_t, ReduceOp>>;

// The node for a DTensor leaf's per-rank contributions: kept pending in the leaf's autograd state
// (summed with earlier ones over the same mesh dims); reduced and passed on to the leaf's
// accumulator only when autograd::grad captures gradients instead of accumulating them.
template <class Reduce>
void record_pending(const Tensor& local, const Tensor& alias, const std::shared_ptr<autograd::AutogradMeta>& leaf,
                    const Reductions& reductions, Reduce reduce) {
  std::vector<std::pair<int64_t, bool>> pending_over;
  for (const auto& [mesh_dim, op] : reductions) pending_over.emplace_back(mesh_dim, op.kind() == ReduceOp::AVG);
  autograd::record("PartialGradBackward", {local}, {alias},
                   [leaf, pending_over, reduce](std::vector<Tensor>& grads) -> std::vector<Tensor> {
                     if (autograd::capturing_gradients()) return {reduce(grads[0])};
                     for (autograd::AutogradMeta::PendingGrad& pending : leaf->pending_grads)
                       if (pending.reductions == pending_over) {
                         pending.value = pending.value + grads[0];
                         return {Tensor()};
                       }
                     leaf->pending_grads.push_back({pending_over, grads[0].clone()});
                     return {Tensor()};
                   });
}

}  // namespace

DTensor reduced_in_backward(const DTensor& input, const Placements& output_placements) {
  const Tensor& local = input.to_local();
  if (!autograd::any_requires_grad(local)) return input;
  std::vector<std::pair<int64_t, ReduceOp>> reductions;  // (mesh dim, how its contributions combine)
  for (size_t m = 0; m < output_placements.size(); ++m) {
    const Placement& out = output_placements[m];
    if (!input.placements()[m].is_replicate() || out.is_replicate()) continue;
    if (out.is_partial() && out.reduce_op() != "sum" && out.reduce_op() != "avg")
      throw Error(fmt::format("autograd: an op whose output is {} on mesh dim {} cannot be differentiated (only "
                              "sum and avg pending reductions are linear); redistribute to Replicate first",
                              out.to_string(), m));
    const bool average = out.is_partial() && out.reduce_op() == "avg";
    reductions.emplace_back(static_cast<int64_t>(m), average ? ReduceOp::AVG : ReduceOp::SUM);
  }
  if (reductions.empty()) return input;
  // The same values under a new handle, so that the reduction has a node of its own.
  const Tensor alias = local.detach();
  const DeviceMesh mesh = input.device_mesh();
  auto reduce = [mesh, reductions](const Tensor& contribution) {
    Tensor grad = contribution.clone();
    for (const auto& [mesh_dim, op] : reductions) all_reduce_along(grad, mesh, static_cast<size_t>(mesh_dim), op);
    return grad;
  };
  const autograd::AutogradMeta* meta = autograd::meta_of(local);
  if (meta != nullptr && meta->dtensor_leaf && meta->grad_fn == nullptr) {
    // A DTensor parameter read as it is: its contributions stay pending (Partial) until grad() or
    // an optimizer needs them reduced, so a parameter used by several ops is reduced once.
    const std::shared_ptr<autograd::AutogradMeta> leaf = autograd::ensure_meta(local);
    record_pending(local, alias, leaf, reductions, reduce);
  } else {
    autograd::record("AllReduceGradBackward", {local}, {alias},
                     [reduce](std::vector<Tensor>& grads) -> std::vector<Tensor> { return {reduce(grads[0])}; });
  }
  return DTensor(alias, input.device_mesh(), input.placements(), input.shape());
}

}  // namespace tessera::dtensor
