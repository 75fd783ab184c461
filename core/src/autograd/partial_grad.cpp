#include "autograd/partial_grad.hpp"

#include <algorithm>
#include <utility>

#include "tessera/ops.hpp"

namespace tessera::autograd {
namespace {

bool passes(const PartialPolicy* keep, const PartialGrad& partial, const PartialDim& dim) {
  if (keep == nullptr || keep->kind != PartialPolicy::Kind::PassThrough) return false;
  if (!keep->mesh || !partial.mesh || !keep->mesh->same_mesh(*partial.mesh)) return false;
  return dim.mesh_dim >= 0 && dim.mesh_dim < 64 && ((keep->replicated >> dim.mesh_dim) & 1u) != 0;
}

// The dims of `a` that `b` lacks.
std::vector<PartialDim> missing_from(const std::vector<PartialDim>& a, const std::vector<PartialDim>& b) {
  std::vector<PartialDim> out;
  for (const PartialDim& d : a)
    if (std::find(b.begin(), b.end(), d) == b.end()) out.push_back(d);
  return out;
}

// Whether a dim is a sum on one side and a mean on the other.
bool conflicting(const std::vector<PartialDim>& a, const std::vector<PartialDim>& b) {
  for (const PartialDim& x : a)
    for (const PartialDim& y : b)
      if (x.mesh_dim == y.mesh_dim && x.average != y.average) return true;
  return false;
}

Tensor combine_all(Tensor grad, PartialGrad& partial) {
  return combine_except(std::move(grad), partial, nullptr);
}

}  // namespace

bool PartialGrad::same_as(const PartialGrad& other) const {
  if (dims != other.dims) return false;
  if (dims.empty()) return true;
  return mesh && other.mesh && mesh->same_mesh(*other.mesh);
}

Tensor combine_except(Tensor grad, PartialGrad& partial, const PartialPolicy* keep) {
  if (partial.empty()) return grad;
  std::vector<PartialDim> now, kept;
  for (const PartialDim& d : partial.dims) (passes(keep, partial, d) ? kept : now).push_back(d);
  if (!now.empty()) grad = partial.mesh->combine(grad, now);
  partial.dims = std::move(kept);
  if (partial.dims.empty()) partial.mesh.reset();
  return grad;
}

void add_gradient(Tensor& slot, PartialGrad& slot_partial, Tensor grad, PartialGrad partial) {
  if (!slot.defined()) {
    slot = std::move(grad);
    slot_partial = std::move(partial);
    return;
  }
  if (!slot_partial.same_as(partial)) {
    const bool one_mesh =
        slot_partial.empty() || partial.empty() || slot_partial.mesh->same_mesh(*partial.mesh);
    if (!one_mesh || conflicting(slot_partial.dims, partial.dims)) {
      slot = combine_all(std::move(slot), slot_partial);
      grad = combine_all(std::move(grad), partial);
    } else {
      const std::shared_ptr<const TermMesh> mesh = slot_partial.empty() ? partial.mesh : slot_partial.mesh;
      const std::vector<PartialDim> slot_lacks = missing_from(partial.dims, slot_partial.dims);
      const std::vector<PartialDim> grad_lacks = missing_from(slot_partial.dims, partial.dims);
      if (!slot_lacks.empty()) slot = mesh->as_terms(slot, slot_lacks);
      if (!grad_lacks.empty()) grad = mesh->as_terms(grad, grad_lacks);
      std::vector<PartialDim> all = slot_partial.dims;
      all.insert(all.end(), slot_lacks.begin(), slot_lacks.end());
      std::sort(all.begin(), all.end(),
                [](const PartialDim& a, const PartialDim& b) { return a.mesh_dim < b.mesh_dim; });
      slot_partial = {mesh, std::move(all)};
    }
  }
  slot = add(slot, grad);
}

}  // namespace tessera::autograd
