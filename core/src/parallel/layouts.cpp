// Layout helpers shared by the parallel styles.
#include "parallel/layouts.hpp"

#include <fmt/format.h>

#include "tensor/memory_accounting.hpp"
#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"

namespace tessera::parallel {
namespace {

// Shard(-1) and Shard(ndim-1) are one layout.
Placement bound(const Placement& placement, int64_t ndim) {
  if (placement.is_shard() && placement.dim() < 0 && ndim > 0)
    return placement.with_dim(placement.dim() + ndim);
  return placement;
}

}  // namespace

DTensor as_dtensor(const nn::Value& value, const DeviceMesh& mesh, const Placement& given,
                   const std::string& where) {
  if (!value.defined()) throw Error(fmt::format("{}: the input is undefined", where));
  if (value.is_dtensor()) return value.dtensor();
  const Tensor& local = value.tensor();
  const Placement layout = bound(given, local.dim());
  if (layout.is_shard() && (layout.dim() < 0 || layout.dim() >= local.dim()))
    throw Error(fmt::format("{}: the input has {} dims, so it cannot be sharded on dim {}", where,
                            local.dim(), given.dim()));
  return from_local(local, mesh, {layout});
}

DTensor lay_out(const DTensor& value, const Placement& given, const Placement& desired) {
  const int64_t ndim = value.dim();
  if (bound(given, ndim) == bound(desired, ndim)) return value;
  return value.redistribute({bound(desired, ndim)});
}

nn::Value finish(const DTensor& value, bool use_local_output) {
  if (use_local_output) return value.to_local();
  return value;
}

void distribute_parameter(const nn::Parameter& parameter, const DeviceMesh& mesh, const Placement& placement,
                          const std::string& where) {
  if (parameter.is_dtensor())
    throw Error(fmt::format("{}: the parameter is already a DTensor ({}); a module is parallelized once",
                            where, placements_text(parameter.dtensor().placements())));
  const Tensor& full = parameter.tensor();
  if (full.is_local())
    throw Error(
        fmt::format("{}: the parameter is a local tensor (one value per rank); make the module with plain "
                    "tensors (outside LocalMode) so that its full parameters can be cut",
                    where));
  const bool requires_grad = full.requires_grad();
  const Placement layout = bound(placement, full.dim());
  if (layout.is_shard() && (layout.dim() < 0 || layout.dim() >= full.dim()))
    throw Error(fmt::format("{}: the parameter has {} dims, so it cannot be sharded on dim {}", where,
                            full.dim(), placement.dim()));
  DTensor distributed = [&] {
    const NoGradGuard no_grad;
    return distribute_tensor(full.detach(), mesh, {layout});
  }();
  distributed.set_requires_grad(requires_grad);
  detail::tag_memory(distributed.to_local(), "parameters");
  parameter.set(std::move(distributed));
}

void check_style_mesh(const DeviceMesh& mesh, const std::string& where) {
  if (mesh.ndim() != 1)
    throw Error(
        fmt::format("{}: parallel styles need a 1-d mesh, but {} has {} dims; pass the tensor-parallel "
                    "dim, e.g. mesh[\"tp\"]",
                    where, mesh.to_string(), mesh.ndim()));
}

}  // namespace tessera::parallel
