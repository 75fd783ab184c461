// DTensor: a tensor laid out over a device mesh (PyTorch: torch.distributed.tensor.DTensor).
//
// A DTensor is (local tensor, mesh, placements, global shape). In simulation the local tensor is
// a local tensor over the mesh's ranks: rank r's shard is what rank r would hold. Ops on DTensors
// pick output placements from their inputs' (sharding propagation); when inputs fit no rule the
// cheapest redistribution is done first and logged as implicit communication.
#pragma once

#include <iosfwd>
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
  DTensor(Tensor local, const DeviceMesh& mesh, const Placements& placements, Shape global_shape);

  // PyTorch: DTensor.from_local; the same as the free from_local below.
  static DTensor from_local(const Tensor& local, const DeviceMesh& mesh, const Placements& placements,
                            std::optional<Shape> shape = std::nullopt);

  const Tensor& to_local() const { return local_; }
  const DeviceMesh& device_mesh() const { return mesh_; }
  const Placements& placements() const { return placements_; }
  // The global shape (size() is PyTorch's spelling of it).
  const Shape& shape() const { return global_shape_; }
  const Shape& size() const { return global_shape_; }
  int64_t size(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(global_shape_.size()); }
  int64_t numel() const;  // of the global tensor
  DType dtype() const { return local_.dtype(); }

  // PyTorch's method spellings of the ops of dtensor_ops.hpp (one implementation: these call them).
  DTensor sum(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  DTensor mean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  DTensor max(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  DTensor min(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  DTensor t() const;  // transpose of a 2-d DTensor; a 0-d or 1-d one is returned as it is
  DTensor transpose(int64_t dim0, int64_t dim1) const;
  DTensor permute(const std::vector<int64_t>& dims) const;
  DTensor view(const Shape& shape) const;
  DTensor reshape(const Shape& shape) const;
  DTensor to(DType dtype) const;  // *this when the dtype already matches

  // Every mesh dim Replicate; the result is a local tensor whose shards are all equal (so
  // reconcile() gives the global tensor).
  Tensor full_tensor() const;
  // Any transition between placements; Partial targets are rejected (except keeping a Partial).
  DTensor redistribute(const Placements& placements) const;
  DTensor redistribute(const DeviceMesh& mesh, const Placements& placements) const;

  std::string to_string() const;

  // Autograd, on the local tensor's graph. A DTensor's gradient is the
  // gradient of its global value, placed like the DTensor with Partial mesh dims as Replicate (as
  // PyTorch's redistribute backward normalises them). Where an op's sharding leaves per-rank
  // contributions to an input's gradient, they are reduced in backward for activations and kept
  // pending (Partial) for DTensor leaves (see grad() and core/src/dtensor/grad_layout.hpp).
  bool requires_grad() const { return local_.requires_grad(); }
  DTensor& set_requires_grad(bool requires_grad);
  DTensor& requires_grad_(bool requires_grad = true) { return set_requires_grad(requires_grad); }
  bool has_grad() const;
  // An Error when backward has not reached this DTensor. The gradient of a Replicate parameter
  // read by ops whose outputs are sharded over a mesh dim comes back Partial over it (as in
  // PyTorch): the ranks' contributions are reduced when used (redistribute, full_tensor, an
  // optimizer step), once, however many ops read the parameter.
  DTensor grad() const;
  DTensor& zero_grad(bool set_to_none = true);
  // A gradient is needed unless the DTensor has exactly one element; it is redistributed to the
  // gradient layout first.
  void backward(const std::optional<DTensor>& gradient = std::nullopt, bool retain_graph = false) const;
  bool is_leaf() const { return local_.is_leaf(); }
  std::string grad_fn_name() const { return local_.grad_fn_name(); }
  DTensor detach() const;

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
// (local size times the shards of each sharded dim); uneven layouts need it given. A plain tensor
// is the local value of every rank (as PyTorch's from_local of a tensor each rank holds).
DTensor from_local(const Tensor& local, const DeviceMesh& mesh, const Placements& placements,
                   std::optional<Shape> shape = std::nullopt);

// Which ranks hold which part of a 1-d or 2-d DTensor, as a text grid (ranges inclusive).
std::string visualize_sharding(const DTensor& tensor);

// PyTorch's repr: DTensor(local_tensor=..., device_mesh=DeviceMesh(...), placements=(Shard(dim=0),)).
std::ostream& operator<<(std::ostream& os, const DTensor& tensor);

}  // namespace tessera
