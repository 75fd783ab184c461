#include "dtensor/grad_layout.hpp"

#include <fmt/format.h>

#include "autograd/record.hpp"
#include "dtensor/redistribute.hpp"
#include "tessera/errors.hpp"

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
  autograd::record("AllReduceGradBackward", {local}, {alias}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    Tensor grad = grads[0].clone();
    for (const auto& [mesh_dim, op] : reductions) all_reduce_along(grad, mesh, static_cast<size_t>(mesh_dim), op);
    return {grad};
  });
  return DTensor(alias, input.device_mesh(), input.placements(), input.shape());
}

}  // namespace tessera::dtensor
