// DTensor's PyTorch method spellings (docs/user-guide.md, "Where the C++ API differs"): each calls
// the op of dtensor_ops.hpp, so a method and its free function cannot drift apart.
#include <fmt/format.h>

#include "tensor/checked_arith.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/dtensor_ops.hpp"
#include "tessera/errors.hpp"

namespace tessera {

DTensor DTensor::from_local(const Tensor& local, const DeviceMesh& mesh, const Placements& placements,
                            std::optional<Shape> shape) {
  return tessera::from_local(local, mesh, placements, std::move(shape));
}

int64_t DTensor::numel() const {
  int64_t count = 1;
  for (int64_t s : global_shape_)
    count = detail::checked_mul(count, s,
                                [&] { return "numel of a DTensor of shape " + shape_text(global_shape_); });
  return count;
}

DTensor DTensor::sum(const std::vector<int64_t>& dims, bool keepdim) const {
  return tessera::sum(*this, dims, keepdim);
}
DTensor DTensor::mean(const std::vector<int64_t>& dims, bool keepdim) const {
  return tessera::mean(*this, dims, keepdim);
}
DTensor DTensor::max(const std::vector<int64_t>& dims, bool keepdim) const {
  return tessera::max(*this, dims, keepdim);
}
DTensor DTensor::min(const std::vector<int64_t>& dims, bool keepdim) const {
  return tessera::min(*this, dims, keepdim);
}

DTensor DTensor::t() const {
  if (dim() > 2)
    throw Error(fmt::format(
        "t: expects a DTensor of at most 2 dims, got {} dims (shape {}); use transpose(dt, d0, d1)", dim(),
        shape_text(global_shape_)));
  return dim() < 2 ? *this : tessera::transpose(*this, 0, 1);
}
DTensor DTensor::transpose(int64_t dim0, int64_t dim1) const { return tessera::transpose(*this, dim0, dim1); }
DTensor DTensor::permute(const std::vector<int64_t>& dims) const { return tessera::permute(*this, dims); }

DTensor DTensor::view(const Shape& shape) const { return tessera::view(*this, shape); }
DTensor DTensor::reshape(const Shape& shape) const { return tessera::reshape(*this, shape); }

}  // namespace tessera
