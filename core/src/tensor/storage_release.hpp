// Releasing a tensor's bytes in place and restoring them (PyTorch:
// untyped_storage().resize_(0) and back), for FSDP: between uses, a sharded module frees the
// bytes of its gathered parameters while the parameter tensors, their views and the tensors
// autograd saved from them stay valid, and gathers the values into them again before the next use.
#pragma once

#include "tessera/tensor.hpp"

namespace tessera {

// Every shard's storage (a dense tensor's one) drops its bytes. Every handle sharing a storage
// (views, values saved for backward) sees the release; reading or writing its elements is then an
// Error naming the release, until restore_storage. Releasing released bytes does nothing. Throws
// Error for an undefined tensor, and for one whose address was handed out (data_ptr, to_dlpack):
// a pointer into the bytes would dangle.
void release_storage(const Tensor& t);

// Gives the released storage of `t` (each shard's) new bytes and copies `values` into them.
// `values` must match `t`: both dense or both local over the same ranks, with the same shape per
// rank and the same dtype; it may live on another backend. `t` must span its whole storage (the
// tensor that was released, not a narrower view of it) and be released. Throws Error naming what
// differs otherwise, before anything changes. The version autograd checks (Tensor::version) is
// not bumped: the values are the ones released, gathered again.
void restore_storage(const Tensor& t, const Tensor& values);

// Whether the bytes of `t` (of every shard) are released. Throws Error for an undefined tensor.
bool storage_released(const Tensor& t);

}  // namespace tessera
