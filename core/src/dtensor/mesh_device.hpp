// The mesh's device type as distribute_tensor sees it: like PyTorch, a tensor is moved to its
// mesh's device, here the backend the device type names (Tensor::to). A mesh whose device type
// names a shapes-only backend (init_device_mesh("meta", ...)) takes the shape only.
#pragma once

#include "tessera/device_mesh.hpp"
#include "tessera/tensor.hpp"

namespace tessera::dtensor {

// `tensor` itself when it is on the backend `mesh`'s device type names, or when that names no
// backend (a label, e.g. "cuda" where no CUDA backend is installed); otherwise `tensor` moved
// there (every shard, for a local tensor).
Tensor on_mesh_device(const Tensor& tensor, const DeviceMesh& mesh);

}  // namespace tessera::dtensor
