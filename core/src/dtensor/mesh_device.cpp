#include "dtensor/mesh_device.hpp"

#include "dispatch/backends.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera::dtensor {
namespace {

bool holds_shapes_only(const Tensor& tensor) {
  if (!tensor.is_local()) return tensor.impl() != nullptr && tensor.impl()->backend().shapes_only();
  const RankMap<Tensor>& shards = tensor.shards();
  return shards.begin() != shards.end() && holds_shapes_only(shards.begin()->second);
}

}  // namespace

Tensor on_mesh_device(const Tensor& tensor, const DeviceMesh& mesh) {
  if (tensor.backend() == mesh.device_type()) return tensor;  // the common case: no lookup
  std::shared_ptr<const dispatch::Backend> backend;
  try {
    backend = dispatch::backend(mesh.device_type());
  } catch (const Error&) {
    return tensor;  // the device type names no backend ("cuda" without a CUDA backend): a label only
  }
  // A tensor of shapes only has no values to move: it stays and is laid out as it is (planning a
  // program for a computing mesh on shapes).
  if (holds_shapes_only(tensor)) return tensor;
  return tensor.to(backend->name());
}

}  // namespace tessera::dtensor
