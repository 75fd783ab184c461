// DTensor: a tensor laid out over a device mesh (PyTorch: torch.distributed.tensor.DTensor).
//
// A DTensor is (local tensor, mesh, placements, global shape). In simulation the local tensor is
// a local tensor over the mesh's ranks: rank r's shard is what rank r would hold. Ops on DTensors
// pick output placements from their inputs' (sharding propagation); when inputs fit no rule the
// cheapest redistribution is done first and logged as implicit communication.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/device_mesh.hpp"
#include "tessera/placement.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

class DTensor {
 public:
  // Checked: placements match the mesh, shard dims are in range, and every rank's shard has the
  // shape the layout gives it. Prefer distribute_tensor / from_local.
  DTensor(Tensor local, DeviceMesh mesh, Placements placements, Shape global_shape);

  const Tensor& to_local() const { return local_; }
  const DeviceMesh& device_mesh() const { return mesh_; }
  const Placements& placements() const { return placements_; }
  const Shape& shape() const { return global_shape_; }
  int64_t dim() const { return static_cast<int64_t>(global_shape_.size()); }
  int64_t size(int64_t dim) const;
  DType dtype() const { return local_.dtype(); }

  // Every mesh dim Replicate; the result is a local tensor whose shards are all equal (so
  // reconcile() gives the global tensor).
  Tensor full_tensor() const;
  // Any transition of SPEC.md section 7; Partial targets are rejected (except keeping a Partial).
  DTensor redistribute(const Placements& placements) const;
  DTensor redistribute(const DeviceMesh& mesh, const Placements& placements) const;

  std::string to_string() const;

 private:
  Tensor local_;
  DeviceMesh mesh_;
  Placements placements_;
  Shape global_shape_;
};

// Lays a tensor out over the mesh: mesh dims left to right, Shard splits (scattered from group
// rank 0), Replicate broadcasts from group rank 0. A local tensor argument must cover the mesh's
// ranks; a plain one is what every rank holds. Partial is rejected.
DTensor distribute_tensor(const Tensor& tensor, const DeviceMesh& mesh, Placements placements);
// Wraps per-rank shards without moving data. The global shape is inferred for even layouts
// (local size times the shards of each sharded dim); uneven layouts need it given.
DTensor from_local(const Tensor& local, const DeviceMesh& mesh, Placements placements,
                   std::optional<Shape> shape = std::nullopt);

// Which ranks hold which part of a 1-d or 2-d DTensor, as a text grid (ranges inclusive).
std::string visualize_sharding(const DTensor& tensor);

}  // namespace tessera
