// Helpers shared by the files that implement tensor operations.
#pragma once

#include <memory>
#include <vector>

#include "tensor/kernel_operand.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/tensor.hpp"

namespace tessera::detail {

// impl_of's error: `t` is undefined or local.
[[noreturn]] void throw_not_dense(const Tensor& t, const char* op);

// The implementation behind a handle; throws on an undefined tensor, naming the op.
inline const TensorImpl& impl_of(const Tensor& t, const char* op) {
  if (t.impl() == nullptr) [[unlikely]]
    throw_not_dense(t, op);
  return *t.impl();
}

// A new contiguous tensor on `backend` (uninitialised).
Tensor empty_on(Shape sizes, DType dtype, std::shared_ptr<const dispatch::Backend> backend);
// A new contiguous tensor like `like` (same backend) with the given sizes and dtype.
Tensor empty_like_on(const TensorImpl& like, Shape sizes, DType dtype);

// The backend factories use when the options name none.
std::shared_ptr<const dispatch::Backend> backend_for(const TensorOptions& options);

// NumPy broadcasting of two shapes; throws naming both shapes and the op.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// The strides that view `t` as `target` (a shape it broadcasts to): 0 for broadcast dims.
std::vector<int64_t> broadcast_strides(const TensorImpl& t, const Shape& target);
// The same into `strides` (target.size() entries), for callers that keep them on the stack.
void broadcast_strides(const TensorImpl& t, const Shape& target, int64_t* strides);

// Sets every element of the dense contiguous `t` to `value` (its dtype's kernel "fill"); no autograd
// or local-tensor checks: for tensors an op has just made.
void fill_dense(const TensorImpl& t, const Scalar& value);

// Writes `src` (broadcast to dst's shape, same dtype) into the view `dst`.
void copy_into(const TensorImpl& dst, const TensorImpl& src);

// Moves `src`'s elements into `dst` by exchanging their storages' memory, when both are dense,
// contiguous, of one dtype, backend and element count, and each spans its whole storage; every
// view of dst's storage then sees the new values, as after an in-place copy. `src` is left with
// dst's old elements. Returns false (and changes nothing) when the layouts do not allow it, or when
// either storage's address has been handed out (Storage::exposed): then the caller copies, so a
// pointer taken earlier keeps naming the tensor's bytes.
bool exchange_storage(const Tensor& dst, const Tensor& src);
// Like exchange_storage, but dst's storage comes to share src's memory (copy-on-write) and src
// keeps it: for one result that lands in many ranks' shards. False in the same cases.
bool share_storage(const Tensor& dst, const Tensor& src);

// Reads all elements to host memory, row-major, as `dtype`. A tensor on a shapes-only backend has
// none to read: an Error naming `op` and the backend.
template <class T>
std::vector<T> read_values(const TensorImpl& t, const char* op = "reading values");

// d gelu(x)/dx element-wise (gelu's backward).
Tensor gelu_grad(const Tensor& a);

}  // namespace tessera::detail
