// Tensor: a cheap, shared handle to either
//  - a dense n-d array on one backend, or
//  - a local tensor: a rank map of dense tensors, one shard per simulated rank (PyTorch's
//    LocalTensor). Every op with a local argument runs once per rank (SPMD) and gives a local
//    result, so user code is written once against Tensor.
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
#include "tessera/rank_map.hpp"
#include "tessera/scalar.hpp"
#include "tessera/sym_int.hpp"

namespace tessera {

using Shape = std::vector<int64_t>;

class TensorImpl;
class LocalTensorImpl;

// Where and of what type a new tensor is made. An empty backend name means the default backend.
struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_value(d), has_dtype(true) {}  // NOLINT: implicit by design

  TensorOptions& dtype(DType d) {
    dtype_value = d;
    has_dtype = true;
    return *this;
  }
  TensorOptions& backend(std::string name) {
    backend_name = std::move(name);
    return *this;
  }

  DType dtype_value = kFloat32;
  bool has_dtype = false;
  std::string backend_name;
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor; every operation on it throws
  explicit Tensor(std::shared_ptr<TensorImpl> impl);
  explicit Tensor(std::shared_ptr<const LocalTensorImpl> local);

  bool defined() const { return impl_ != nullptr || local_ != nullptr; }
  DType dtype() const;
  int64_t dim() const;
  // Per dim: a plain int, or a local int where the shards' sizes differ.
  SymShape shape() const;
  SymInt sym_size(int64_t dim) const;
  // Plain sizes; for a local tensor only when every shard has the same shape (else it throws).
  const Shape& sizes() const;
  int64_t size(int64_t dim) const;              // negative dims count from the end
  const std::vector<int64_t>& strides() const;  // dense tensors only
  int64_t numel() const;
  bool is_contiguous() const;
  const std::string& backend() const;  // the backend's name, e.g. "cpu"

  // Local tensors (see local.hpp). ranks(), shard() and shards() throw on a dense tensor.
  bool is_local() const { return local_ != nullptr; }
  RankSet ranks() const;
  Tensor shard(int rank) const;  // rank's dense tensor
  const RankMap<Tensor>& shards() const;
  // One dense copy when every shard is bitwise equal; otherwise an error naming the ranks that
  // differ from the first, the first differing index and both values.
  Tensor reconcile() const;

  // Autograd (see autograd.hpp). Only floating-point tensors can require grad; a local tensor
  // requires grad as a whole (its shards never do). Every handle to one tensor shares its state.
  bool requires_grad() const;
  Tensor& set_requires_grad(bool requires_grad);
  Tensor& requires_grad_(bool requires_grad = true) { return set_requires_grad(requires_grad); }
  // The accumulated gradient (a local tensor for a local tensor); undefined until a backward
  // reached this tensor, and for non-leaves unless retain_grad() was called.
  Tensor grad() const;
  // Replaces the accumulated gradient (an undefined tensor clears it); it must match in shape.
  Tensor& set_grad(const Tensor& grad);
  // Clears the gradient (PyTorch's zero_grad): set_to_none drops it, else it is filled with zeros.
  Tensor& zero_grad(bool set_to_none = true);
  // See autograd::backward. A gradient is needed unless every shard has exactly one element.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  // Leaves are tensors no recorded op made: what the user created (or detached).
  bool is_leaf() const;
  // The name of the op that made this tensor, e.g. "MmBackward"; empty for a leaf.
  std::string grad_fn_name() const;
  // Keeps this non-leaf's gradient in grad() after backward (leaves always keep theirs).
  Tensor& retain_grad();
  // The same values, cut from the graph: no grad_fn and no requires_grad (shares the data).
  Tensor detach() const;
  // How many times this tensor's data was written in place (PyTorch: _version); autograd uses it
  // to refuse values saved for backward that were overwritten since. A local tensor sums its
  // shards' counts.
  int64_t version() const;

  // Views: share storage with *this.
  Tensor view(const SymShape& shape) const;     // needs compatible strides; one dim may be -1
  Tensor reshape(const SymShape& shape) const;  // a view when possible, else a copy
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;  // transpose of a 2-d (or 1-d) tensor
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor narrow(int64_t dim, const SymInt& start, const SymInt& length) const;
  Tensor slice(int64_t dim, const SymInt& start, const SymInt& end,
               int64_t step = 1) const;                   // t[start:end:step]
  Tensor select(int64_t dim, const SymInt& index) const;  // removes `dim`
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor flip(const std::vector<int64_t>& dims) const;  // a view with negative strides
  Tensor expand(const SymShape& shape) const;           // broadcast view (stride 0), -1 keeps a size

  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(DType dtype) const;  // *this when the dtype already matches
  // A copy on another backend (PyTorch: tensor.to("cuda")), contiguous, same dtype and values;
  // *this when already there. A local tensor moves every shard. Differentiable: the gradient
  // moves back. Onto a shapes-only backend only the shape goes; from one there are no values.
  Tensor to(const std::string& backend) const;
  Tensor to(const char* backend) const { return to(std::string(backend)); }
  // Backend and dtype at once; what the options leave unset stays as it is.
  Tensor to(const TensorOptions& options) const;

  // In-place writes into this tensor's elements (through views too).
  Tensor& copy_(const Tensor& src);  // src broadcasts to this shape and is cast to this dtype
  Tensor& fill_(Scalar value);

  // Values. item() needs exactly one element. On a local tensor: the common value when all
  // shards agree; a per-rank Scalar when integral values differ; an error when floats differ.
  Scalar item() const;
  template <class T>
  T item() const {
    return item().to<T>();
  }
  // All elements, row-major, cast to T; a local tensor's shards must be equal.
  template <class T>
  std::vector<T> to_vector() const;
  // Where a plain tensor's first element lives (PyTorch: data_ptr). Once taken, the tensor keeps
  // those bytes for good: bytes it shared with another rank's identical shard are copied first, and
  // in-place ops (collectives included) write into them rather than swap in other memory, so the
  // pointer names this tensor's bytes, and only its, for as long as the tensor lives.
  // Throws on a local tensor (use shard(r).data_ptr()); null for a tensor with no bytes.
  const void* data_ptr() const;
  // Where the first element lives now, without fixing it (data_ptr does): identical shards of
  // different ranks may share one buffer (shared replicas), and equal addresses tell that they do.
  // For inspection only: the address may change at the tensor's next write or in-place op.
  const void* current_address() const;

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
  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }  // null for a local tensor
  const std::shared_ptr<const LocalTensorImpl>& local_impl() const { return local_; }

 private:
  const TensorImpl& checked() const;
  const LocalTensorImpl& checked_local(const char* op) const;
  std::shared_ptr<TensorImpl> impl_;
  std::shared_ptr<const LocalTensorImpl> local_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tessera
