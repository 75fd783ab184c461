// What a local Tensor points to: one dense shard per rank, validated once at construction.
#pragma once

#include <optional>

#include "autograd/meta.hpp"
#include "tessera/rank_map.hpp"
#include "tessera/sym_int.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

class LocalTensorImpl {
 public:
  // Throws Error for an empty map, undefined or local shards, mixed dtypes or backends, or a shard
  // that requires grad.
  explicit LocalTensorImpl(RankMap<Tensor> shards);

  const RankMap<Tensor>& shards() const { return shards_; }
  const RankSet& ranks() const { return ranks_; }
  const Tensor& first() const { return shards_.begin()->second; }
  DType dtype() const { return first().dtype(); }
  int64_t dim() const { return first().dim(); }
  const SymShape& shape() const { return shape_; }
  // Whether every rank's shard is one and the same TensorImpl (shapes-only shards of one layout):
  // asked by every op (spmd_alias, spmd_pure), so found once here.
  bool one_object() const { return one_object_; }
  // The common shape, or nullopt when shards differ in some dim.
  const std::optional<Shape>& uniform_sizes() const { return uniform_sizes_; }
  // The local tensor's autograd state: it requires grad as a whole, never its shards.
  const autograd::AutogradSlot& autograd() const { return autograd_; }

 private:
  RankMap<Tensor> shards_;
  RankSet ranks_;
  SymShape shape_;
  std::optional<Shape> uniform_sizes_;
  bool one_object_ = false;
  autograd::AutogradSlot autograd_;
};

}  // namespace tessera
