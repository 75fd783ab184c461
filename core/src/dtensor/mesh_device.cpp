#include "dtensor/mesh_device.hpp"

#include <utility>
#include <vector>

#include "plugin/registry.hpp"
#include "tensor/internal.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"

namespace tessera::dtensor {
namespace {

Tensor shapes_of(const Tensor& tensor, const std::shared_ptr<const dispatch::Backend>& backend) {
  if (!tensor.is_local()) return detail::empty_on(tensor.sizes(), tensor.dtype(), backend);
  std::vector<std::pair<int, Tensor>> shards;
  for (const auto& [rank, shard] : tensor.shards()) shards.emplace_back(rank, shapes_of(shard, backend));
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}

}  // namespace

Tensor on_mesh_device(const Tensor& tensor, const DeviceMesh& mesh) {
  if (tensor.backend() == mesh.device_type()) return tensor;  // the common case: no lookup
  std::shared_ptr<const dispatch::Backend> backend;
  try {
    backend = plugin::Registry::instance().backend(mesh.device_type());
  } catch (const Error&) {
    return tensor;  // the device type names no backend ("cuda" without a CUDA backend): a label only
  }
  return backend->shapes_only() ? shapes_of(tensor, backend) : tensor;
}

}  // namespace tessera::dtensor
