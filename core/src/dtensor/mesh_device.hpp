// The mesh's device type as distribute_tensor sees it. PyTorch moves a tensor to its mesh's device;
// Tessera has no copies between backends, but one case needs none: a mesh whose device type names a
// shapes-only backend (init_device_mesh("meta", ...)) lays out shapes, and shapes are all a tensor
// of any backend can hand over.
#pragma once

#include "tessera/device_mesh.hpp"
#include "tessera/tensor.hpp"

namespace tessera::dtensor {

// `tensor` itself, unless `mesh`'s device type names a shapes-only backend that `tensor` is not on:
// then a tensor of the same shape and dtype (per rank, for a local tensor) on that backend.
Tensor on_mesh_device(const Tensor& tensor, const DeviceMesh& mesh);

}  // namespace tessera::dtensor
