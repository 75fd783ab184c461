#include "tensor/local_tensor_impl.hpp"

#include <fmt/format.h>

#include "tensor/memory_accounting.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {

LocalTensorImpl::LocalTensorImpl(RankMap<Tensor> shards) : shards_(std::move(shards)) {
  if (shards_.empty()) throw Error("local tensor cannot be empty: it needs a shard for at least one rank");
  for (const auto& [rank, shard] : shards_) {
    if (!shard.defined()) throw Error(fmt::format("local tensor: the shard for rank {} is undefined", rank));
    if (shard.is_local())
      throw Error(fmt::format("local tensor: the shard for rank {} is itself a local tensor", rank));
  }
  // One pass of checks and shape comparison: every op builds a local tensor, so this runs
  // once per rank per op.
  const auto& [first_rank, first_shard] = *shards_.begin();
  const TensorImpl& first = *first_shard.impl();
  bool uniform = true;
  for (const auto& [rank, shard] : shards_) {
    const TensorImpl& impl = *shard.impl();
    if (impl.dtype() != first.dtype())
      throw Error(fmt::format("local tensor: shards have different dtypes: rank {} is {} but rank {} is {}",
                              first_rank, dtype_name(first.dtype()), rank, dtype_name(impl.dtype())));
    if (&impl.backend() != &first.backend() && impl.backend().name() != first.backend().name())
      throw Error(fmt::format(
          "local tensor: shards are on different backends: rank {} is on '{}' but rank {} is on '{}'",
          first_rank, first.backend().name(), rank, impl.backend().name()));
    if (impl.dim() != first.dim())
      throw Error(fmt::format(
          "local tensor: shards have different numbers of dims: rank {} has {} but rank {} has {}",
          first_rank, first.dim(), rank, impl.dim()));
    if (shard.requires_grad())
      throw Error(
          fmt::format("local tensor: the shard for rank {} requires grad; shards must not: set requires_grad "
                      "on the local tensor itself (lt.set_requires_grad(true)), or build it from detached "
                      "shards (shard.detach())",
                      rank));
    // Replicas of one result share its layout object: equal without comparing the sizes.
    uniform = uniform && (impl.shares_layout_with(first) || impl.sizes() == first.sizes());
  }

  // Memory counters count each shard's bytes for its rank (a load per shard while none watches),
  // once every shard passed.
  for (const auto& [rank, shard] : shards_) detail::memory_held_by(*shard.impl()->storage(), rank);

  // Shapes without values: shards of one layout are interchangeable (no rank can write bytes
  // another reads), so ranks hold one shard object and later ops on them run once (spmd_alias,
  // spmd_pure). While a MemoryCounter watches, each rank keeps its own, counted as its rank's.
  if (first.backend().shapes_only() && !detail::memory_watched()) {
    for (auto& [rank, shard] : shards_) {
      const TensorImpl& impl = *shard.impl();
      if (&impl != &first && impl.sizes() == first.sizes() && impl.strides() == first.strides() &&
          impl.offset() == first.offset())
        shard = first_shard;
    }
  }
  ranks_ = shards_.ranks();
  one_object_ = true;
  for (const auto& [rank, shard] : shards_) one_object_ = one_object_ && shard.impl() == first_shard.impl();
  if (uniform) {
    // The common case (every op on evenly shaped shards): no per-rank sizes to build.
    shape_ = SymShape(first_shard.sizes());
    uniform_sizes_ = first_shard.sizes();
    return;
  }
  std::vector<SymInt> sizes;
  for (int64_t d = 0; d < first_shard.dim(); ++d) {
    std::vector<std::pair<int, int64_t>> per_rank;
    for (const auto& [rank, shard] : shards_)
      per_rank.emplace_back(rank, shard.sizes()[static_cast<size_t>(d)]);
    sizes.emplace_back(LocalInt(RankMap<int64_t>(std::move(per_rank))));
  }
  shape_ = SymShape(std::move(sizes));
}

}  // namespace tessera
