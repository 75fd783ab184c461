// Tensor: a cheap, shared handle to an n-d array on one backend.
//
// Copying a Tensor copies the handle, not the data (as in PyTorch). Views (transpose, narrow,
// reshape of a contiguous tensor, ...) share the data of the tensor they came from; clone() and
// contiguous() of a non-contiguous tensor copy it. All computation happens in backend plugins.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "tessera/dtype.hpp"
#include "tessera/scalar.hpp"

namespace tessera {

using Shape = std::vector<int64_t>;

class TensorImpl;

// Where and of what type a new tensor is made. An empty backend name means the default backend.
struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_value(d), has_dtype(true) {}  // NOLINT: implicit by design

  TensorOptions& dtype(DType d) { dtype_value = d; has_dtype = true; return *this; }
  TensorOptions& backend(std::string name) { backend_name = std::move(name); return *this; }

  DType dtype_value = kFloat32;
  bool has_dtype = false;
  std::string backend_name;
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor; every operation on it throws
  explicit Tensor(std::shared_ptr<TensorImpl> impl);

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  int64_t dim() const;
  const Shape& sizes() const;
  Shape shape() const { return sizes(); }
  int64_t size(int64_t dim) const;  // negative dims count from the end
  const std::vector<int64_t>& strides() const;
  int64_t numel() const;
  bool is_contiguous() const;
  const std::string& backend() const;  // the backend's name, e.g. "cpu"

  // Views: share storage with *this.
  Tensor view(const Shape& shape) const;  // needs compatible strides; one dim may be -1
  Tensor reshape(const Shape& shape) const;  // a view when possible, else a copy
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;  // transpose of a 2-d (or 1-d) tensor
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;  // Python t[start:end:step]
  Tensor select(int64_t dim, int64_t index) const;  // removes `dim`
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor flip(const std::vector<int64_t>& dims) const;  // a view with negative strides
  Tensor expand(const Shape& shape) const;  // broadcast view (stride 0), -1 keeps a size

  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(DType dtype) const;  // *this when the dtype already matches

  // In-place writes into this tensor's elements (through views too).
  Tensor& copy_(const Tensor& src);  // src broadcasts to this shape and is cast to this dtype
  Tensor& fill_(Scalar value);

  // Values. item() needs exactly one element.
  Scalar item() const;
  template <class T> T item() const { return item().to<T>(); }
  template <class T> std::vector<T> to_vector() const;  // all elements, row-major, cast to T

  // Method spellings of the free functions in ops.hpp.
  Tensor sum() const;
  Tensor sum(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  Tensor matmul(const Tensor& other) const;
  Tensor softmax(int64_t dim) const;

  std::string to_string() const;
  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }

 private:
  const TensorImpl& checked() const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tessera
