// FSDP (PyTorch: torch.distributed.fsdp.fully_shard, "FSDP2") and DDP (torch.distributed's
// composable replicate).
//
// fully_shard(module, {.mesh = dp_mesh}) makes the module's parameters (those not already managed
// by a fully_shard on a submodule) one group, sharded over the data-parallel mesh: each becomes a
// DTensor Shard(0) on it, so a rank holds 1/dp of them. Around the module's forward the group is
// all-gathered (one all_gather for the whole group, in mp_policy.param_dtype), the module computes
// with the unsharded values, and after forward they are freed again (reshard_after_forward) and
// all-gathered once more when backward reaches the module. Backward reduce-scatters the group's
// gradients (one reduce_scatter, in mp_policy.reduce_dtype, averaged over the data-parallel ranks)
// into the sharded parameters' grad(). Apply it to each block first and to the root last, as in
// PyTorch; the root keeps its parameters unsharded from forward to backward. Several forwards
// before their backwards (a pipeline stage's micro-batches) each gather values of their own, and each
// backward reduce-scatters its own forward's gradients into grad(), where they accumulate.
//
// With tensor parallelism (parallelize_module on mesh["tp"] first), a parameter that is a DTensor
// on the tensor-parallel mesh becomes a DTensor on the (dp, tp) mesh: its tensor-parallel shard is
// sharded over dp on dim 0, or on dim 1 when tensor parallelism already shards dim 0 (PyTorch
// shards dim 0 twice with a strided placement; the values, the collectives and their sizes are the
// same). A 1-d parameter tensor parallelism shards (a column-parallel bias) is sharded over dp
// within each tensor-parallel block: StridedShard(0, tp) on dp, as PyTorch; its length must divide
// evenly over tp.
#pragma once

#include <optional>

#include "tessera/device_mesh.hpp"
#include "tessera/dtype.hpp"
#include "tessera/nn/module.hpp"

namespace tessera {

struct MixedPrecisionPolicy {
  std::optional<DType> param_dtype = std::nullopt;   // the dtype parameters are gathered and used in
  std::optional<DType> reduce_dtype = std::nullopt;  // the dtype gradients are reduce-scattered in
};

struct FullyShardOptions {
  DeviceMesh mesh;  // the 1-d data-parallel mesh
  bool reshard_after_forward = true;
  MixedPrecisionPolicy mp_policy = {};
};

nn::Module& fully_shard(nn::Module& module, const FullyShardOptions& options);
template <class Holder, class = typename Holder::ContainedType>
Holder fully_shard(Holder holder, const FullyShardOptions& options) {
  fully_shard(*holder, options);
  return holder;
}

// Whether fully_shard was applied to this module.
bool is_fully_sharded(const nn::Module& module);

struct ReplicateOptions {
  DeviceMesh mesh;            // the 1-d data-parallel mesh
  double bucket_cap_mb = 25;  // gradients are all-reduced in buckets of at most this many MiB
};

// DDP: every rank keeps the whole module; backward averages each gradient over the mesh with
// all_reduce, the parameters grouped into buckets of bucket_cap_mb in reverse registration order
// (the order backward produces them), one all_reduce per bucket.
nn::Module& replicate(nn::Module& module, const ReplicateOptions& options);
template <class Holder, class = typename Holder::ContainedType>
Holder replicate(Holder holder, const ReplicateOptions& options) {
  replicate(*holder, options);
  return holder;
}

}  // namespace tessera
