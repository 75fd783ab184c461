// The parts of detail/spmd.hpp that look inside shards (so they live at the ranks layer, above
// tensor): the work a rank's shard means, and for spmd_pure which ranks' arguments are the same
// and replicas of a result for the ranks that did not compute it (shared replicas, docs/planning.md).
#include <algorithm>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tensor/local_tensor_impl.hpp"
#include "tensor/memory_accounting.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/detail/spmd.hpp"

namespace tessera::detail {

int64_t SpmdArg<Tensor>::work(const Tensor& t) {
  if (!t.defined() || !t.is_local()) return 0;
  const Tensor& first = t.shards().begin()->second;
  // Shapes without values cost no work per element, however large the shapes.
  return first.impl()->backend().shapes_only() ? 0 : first.numel();
}

void append_shard_identity(const Tensor& local, int rank, std::vector<int64_t>& words) {
  const TensorImpl& shard = *local.shards().at(rank).impl();
  // The bytes a shard reads: shared replicas have equal data pointers. A shapes-only backend has
  // no bytes: a pure op's result there depends on the dtype and the layout alone, so shards of one
  // layout are alike whatever Storage holds them (ranks of equal shard shapes compute once).
  // Elsewhere a Storage without bytes (released, or empty) is its own identity.
  const void* data = shard.storage()->data.load();
  const void* bytes = shard.backend().shapes_only() ? nullptr
                      : data != nullptr             ? data
                                                    : shard.storage().get();
  const size_t dims = shard.sizes().size();
  const size_t at = words.size();
  words.resize(at + 4 + 2 * dims);  // written in place: this runs per rank per argument of every op
  int64_t* word = words.data() + at;
  *word++ = static_cast<int64_t>(reinterpret_cast<uintptr_t>(bytes));
  *word++ = static_cast<int64_t>(shard.dtype());
  *word++ = shard.offset();
  *word++ = static_cast<int64_t>(dims);
  word = std::copy(shard.sizes().begin(), shard.sizes().end(), word);
  std::copy(shard.strides().begin(), shard.strides().end(), word);
}

bool may_share_shards(const Tensor& local) {
  // Shards that share bytes are replicas, whose Storage marks the bytes as shared: if the first
  // shard's bytes are private, the ranks' shards are taken as distinct without comparing them.
  const Storage& first = *local.shards().begin()->second.impl()->storage();
  return first.shared != nullptr || first.data == nullptr;
}

namespace {

// Whether every rank may hold `impl` itself rather than a replica of it. A shapes-only tensor has no
// bytes, so no rank can write anything through its handle that another rank could read: the ranks
// hold the one result itself, not a replica each (a TensorImpl and a Storage per rank of every op).
// Counted memory is per Storage, and each rank's shard counts as that rank's: while a
// MemoryCounter is alive every rank gets a replica.
bool held_as_one_object(const TensorImpl& impl) { return impl.backend().shapes_only() && !memory_watched(); }

}  // namespace

bool shares_shapes_only_results(const Tensor& local) {
  return held_as_one_object(*local.shards().begin()->second.impl());
}

bool shards_are_one_object(const Tensor& local) { return local.local_impl()->one_object(); }

bool shards_are_replicas(const Tensor& local) {
  // Replicas of one result share its bytes and its layout object, so every rank's identity words
  // (append_shard_identity) are equal: known here without writing them out per rank. Anything else
  // (bytes of their own, layouts made apart, shapes-only shards) is left to the words.
  const RankMap<Tensor>& shards = local.shards();
  const TensorImpl& first = *shards.begin()->second.impl();
  const void* data = first.storage()->data.load();
  if (data == nullptr || first.backend().shapes_only()) return false;
  for (const auto& [rank, shard] : shards) {
    const TensorImpl& impl = *shard.impl();
    if (impl.storage()->data.load() != data || impl.dtype() != first.dtype() ||
        impl.offset() != first.offset() || !impl.shares_layout_with(first))
      return false;
  }
  return true;
}

Tensor replica_of(const Tensor& plain) {
  const TensorImpl& impl = *plain.impl();
  return held_as_one_object(impl) ? plain : Tensor(impl.replica());
}

void append_replicas(const Tensor& plain, const RankSet& ranks, size_t first,
                     std::vector<std::pair<int, Tensor>>& shards) {
  const TensorImpl& impl = *plain.impl();
  const size_t count = ranks.size() - std::min(first, ranks.size());
  if (held_as_one_object(impl)) {
    for (size_t i = first; i < ranks.size(); ++i) shards.emplace_back(ranks[i], plain);
    return;
  }
  std::vector<std::shared_ptr<TensorImpl>> replicas;
  replicas.reserve(count);
  impl.replicas(count, replicas);
  for (size_t i = 0; i < count; ++i) shards.emplace_back(ranks[first + i], Tensor(std::move(replicas[i])));
}

void group_by_identity(const std::vector<int64_t>& words, const std::vector<size_t>& starts,
                       std::vector<size_t>& leader_of, std::vector<size_t>& leaders) {
  const size_t n = starts.size() - 1;
  const auto span_of = [&](size_t i) {
    return std::span<const int64_t>(words.data() + starts[i], starts[i + 1] - starts[i]);
  };
  const auto same = [&](size_t i, size_t j) {
    const auto a = span_of(i), b = span_of(j);
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  };
  // The usual case, every rank alike (replicas in, replicas out), costs one pass and no map.
  size_t i = 1;
  while (i < n && same(i, 0)) ++i;
  if (i == n) {
    leaders.assign(1, 0);
    std::fill(leader_of.begin(), leader_of.end(), 0);
    return;
  }
  std::map<std::vector<int64_t>, size_t> group;  // words -> position in leaders
  for (size_t k = 0; k < n; ++k) {
    // Ranks of one group are usually neighbours: the one before decides without the map.
    if (k > 0 && same(k, k - 1)) {
      leader_of[k] = leader_of[k - 1];
      continue;
    }
    const auto words_k = span_of(k);
    const auto [it, first] =
        group.try_emplace(std::vector<int64_t>(words_k.begin(), words_k.end()), leaders.size());
    if (first) leaders.push_back(k);
    leader_of[k] = it->second;
  }
}

}  // namespace tessera::detail
