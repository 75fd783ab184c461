#include "tensor/tensor_impl.hpp"

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera {

std::vector<int64_t> contiguous_strides(const Shape& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

int64_t shape_numel(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t lo = ndim == 0 ? -1 : -ndim;
  const int64_t hi = ndim == 0 ? 0 : ndim - 1;
  if (dim < lo || dim > hi)
    throw Error(fmt::format("{}: dim {} is out of range for a tensor of {} dims (expected {}..{})", op, dim,
                            ndim, lo, hi));
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

std::string shape_text(const Shape& sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

TensorImpl::TensorImpl(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, std::vector<int64_t> strides,
                       int64_t offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      offset_(offset),
      numel_(shape_numel(sizes_)) {}

std::shared_ptr<TensorImpl> TensorImpl::allocate(const Shape& sizes, DType dtype,
                                                 std::shared_ptr<const dispatch::Backend> backend) {
  if (static_cast<int64_t>(sizes.size()) > kMaxDims)
    throw Error(fmt::format("a tensor may have at most {} dims, got {} (shape {})", kMaxDims, sizes.size(),
                            shape_text(sizes)));
  for (int64_t s : sizes)
    if (s < 0) throw Error(fmt::format("negative size {} in shape {}", s, shape_text(sizes)));
  const size_t bytes = static_cast<size_t>(shape_numel(sizes)) * itemsize(dtype);
  auto storage = std::make_shared<Storage>(std::move(backend), bytes);
  return std::make_shared<TensorImpl>(std::move(storage), dtype, sizes, contiguous_strides(sizes), 0);
}

std::shared_ptr<TensorImpl> TensorImpl::view(Shape sizes, std::vector<int64_t> strides, int64_t offset) const {
  return std::make_shared<TensorImpl>(storage_, dtype_, std::move(sizes), std::move(strides), offset);
}

bool TensorImpl::is_contiguous() const {
  if (numel_ == 0) return true;
  int64_t expected = 1;
  for (size_t d = sizes_.size(); d-- > 0;) {
    if (sizes_[d] != 1 && strides_[d] != expected) return false;
    expected *= sizes_[d];
  }
  return true;
}

}  // namespace tessera
