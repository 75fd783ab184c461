// What a Tensor handle points to: a strided view of one Storage on one backend.
#pragma once

#include <memory>
#include <vector>

#include "dispatch/backend.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// One allocation on one backend, freed by that backend when the last view of it is gone.
struct Storage {
  Storage(std::shared_ptr<const dispatch::Backend> owner, size_t size_in_bytes)
      : backend(std::move(owner)), data(backend->allocate(size_in_bytes)), bytes(size_in_bytes) {}
  ~Storage() { backend->deallocate(data); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::shared_ptr<const dispatch::Backend> backend;
  void* data;
  size_t bytes;
};

// Invariant, checked on construction: sizes are non-negative, their product fits int64 (as does the
// product with every 0 taken as 1, so contiguous strides never overflow), and every element the
// view can address lies inside its storage. Breaking it is a tessera::Error naming `op`.
class TensorImpl {
 public:
  TensorImpl(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, std::vector<int64_t> strides,
             int64_t offset, const char* op = "tensor");

  // A fresh contiguous tensor; its elements are uninitialised.
  static std::shared_ptr<TensorImpl> allocate(const Shape& sizes, DType dtype,
                                              std::shared_ptr<const dispatch::Backend> backend);
  // A view of the same storage with other sizes, strides and element offset; `op` names the view
  // in the error thrown when the layout reaches outside the storage.
  std::shared_ptr<TensorImpl> view(Shape sizes, std::vector<int64_t> strides, int64_t offset,
                                   const char* op = "view") const;

  const std::shared_ptr<Storage>& storage() const { return storage_; }
  const dispatch::Backend& backend() const { return *storage_->backend; }
  const std::shared_ptr<const dispatch::Backend>& backend_ptr() const { return storage_->backend; }
  DType dtype() const { return dtype_; }
  const Shape& sizes() const { return sizes_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t numel() const { return numel_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  bool is_contiguous() const;
  bool requires_grad() const { return requires_grad_; }
  void set_requires_grad(bool value) const { requires_grad_ = value; }

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_;
  Shape sizes_;
  std::vector<int64_t> strides_;
  int64_t offset_;
  int64_t numel_;
  mutable bool requires_grad_ = false;  // a marker only; no autograd at this layer
};

// Row-major strides for `sizes` (a shape shape_numel accepts).
std::vector<int64_t> contiguous_strides(const Shape& sizes);
// The number of elements of `sizes`; throws when a size is negative or the sizes multiply past
// int64 (see TensorImpl's invariant). `op` prefixes the message.
int64_t shape_numel(const Shape& sizes, const char* op = "shape");
// The bytes a contiguous tensor of `sizes` and `dtype` needs; throws when they do not fit ptrdiff_t.
size_t shape_bytes(const Shape& sizes, DType dtype, const char* op = "shape");
// Normalises a possibly negative dim against `ndim` dims; throws naming the op when out of range.
int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op);
std::string shape_text(const Shape& sizes);

// The largest number of dims a tensor may have.
inline constexpr int64_t kMaxDims = 16;

}  // namespace tessera
