// empty_like / zeros_like / ones_like / full_like of a DTensor: a new DTensor laid out like it.
// A Partial mesh dim becomes Replicate: the new value is what the tensor holds, not a pending
// term (ones_like of a P(sum) tensor left Partial would sum to the mesh dim's size).
#include "tessera/dtensor_ops.hpp"
#include "tessera/factories.hpp"

namespace tessera {
namespace {

DTensor laid_out_like(const DTensor& like, Tensor local) {
  Placements placements = like.placements();
  for (Placement& p : placements)
    if (p.is_partial()) p = Replicate();
  return DTensor(std::move(local), like.device_mesh(), placements, like.shape());
}

}  // namespace

DTensor empty_like(const DTensor& like, TensorOptions options) {
  return laid_out_like(like, empty_like(like.to_local(), std::move(options)));
}
DTensor zeros_like(const DTensor& like, TensorOptions options) {
  return laid_out_like(like, zeros_like(like.to_local(), std::move(options)));
}
DTensor ones_like(const DTensor& like, TensorOptions options) {
  return laid_out_like(like, ones_like(like.to_local(), std::move(options)));
}
DTensor full_like(const DTensor& like, Scalar value, TensorOptions options) {
  return laid_out_like(like, full_like(like.to_local(), value, std::move(options)));
}

}  // namespace tessera
