// Matrix products: mm and bmm kernels; matmul maps torch.matmul's rules onto them.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tensor/type_promotion.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

using detail::impl_of;

std::pair<Tensor, Tensor> promoted(const char* op, const Tensor& a, const Tensor& b) {
  impl_of(a, op);
  impl_of(b, op);
  const DType dtype = detail::ResultType().add(a).add(b).result();
  return {a.to(dtype), b.to(dtype)};
}

[[noreturn]] void inner_mismatch(const char* op, const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
  throw Error(fmt::format("{}: inner dimensions do not match: a has shape {} and b has shape {} ({} != {})",
                          op, shape_text(a.sizes()), shape_text(b.sizes()), ka, kb));
}

Tensor product(const char* op, const Tensor& a, const Tensor& b, const Shape& out_shape) {
  const TensorImpl& ia = *a.impl();
  Tensor out = detail::empty_like_on(ia, out_shape, ia.dtype());
  dispatch::call_kernel(op, ia.dtype(), {dispatch::operand(ia), dispatch::operand(*b.impl())},
                        {dispatch::operand(*out.impl())});
  return out;
}

Tensor dense_mm(const Tensor& a, const Tensor& b) {
  auto [ca, cb] = promoted("mm", a, b);
  if (ca.dim() != 2 || cb.dim() != 2)
    throw Error(fmt::format("mm: expected two 2-d tensors, got shapes {} and {}", shape_text(ca.sizes()),
                            shape_text(cb.sizes())));
  if (ca.size(1) != cb.size(0)) inner_mismatch("mm", ca, cb, ca.size(1), cb.size(0));
  return product("mm", ca, cb, {ca.size(0), cb.size(1)});
}

Tensor dense_bmm(const Tensor& a, const Tensor& b) {
  auto [ca, cb] = promoted("bmm", a, b);
  if (ca.dim() != 3 || cb.dim() != 3)
    throw Error(fmt::format("bmm: expected two 3-d tensors, got shapes {} and {}", shape_text(ca.sizes()),
                            shape_text(cb.sizes())));
  if (ca.size(0) != cb.size(0))
    throw Error(fmt::format("bmm: batch sizes differ: a has shape {} and b has shape {} ({} != {})",
                            shape_text(ca.sizes()), shape_text(cb.sizes()), ca.size(0), cb.size(0)));
  if (ca.size(2) != cb.size(1)) inner_mismatch("bmm", ca, cb, ca.size(2), cb.size(1));
  return product("bmm", ca, cb, {ca.size(0), ca.size(1), cb.size(2)});
}

Tensor dense_matmul(const Tensor& a, const Tensor& b) {
  auto [ca, cb] = promoted("matmul", a, b);
  const int64_t da = ca.dim();
  const int64_t db = cb.dim();
  if (da == 0 || db == 0)
    throw Error(fmt::format("matmul: both operands need at least 1 dim, got shapes {} and {}",
                            shape_text(ca.sizes()), shape_text(cb.sizes())));
  const int64_t ka = ca.size(-1);
  const int64_t kb = db == 1 ? cb.size(0) : cb.size(-2);
  if (ka != kb) inner_mismatch("matmul", ca, cb, ka, kb);

  if (da <= 2 && db <= 2) {
    Tensor result = dense_mm(da == 1 ? ca.unsqueeze(0) : ca, db == 1 ? cb.unsqueeze(1) : cb);
    if (db == 1) result = result.squeeze(-1);
    if (da == 1) result = result.squeeze(0);
    return result;
  }
  if (db <= 2) {
    // [..., m, k] x [k, n]: fold the batch into the rows, one gemm.
    // Sizes spelled out, not -1: with k = 0 the row count cannot be inferred from the element count.
    Shape out_shape(ca.sizes().begin(), ca.sizes().end() - 1);
    Tensor rows = ca.reshape({shape_numel(out_shape, "matmul"), ka});
    Tensor result = dense_mm(rows, db == 1 ? cb.unsqueeze(1) : cb);
    if (db == 2) out_shape.push_back(cb.size(1));
    return result.reshape(out_shape);
  }

  // Batched: broadcast the batch dims of both, then one bmm over the flattened batch.
  const Tensor ma = da == 1 ? ca.unsqueeze(0) : ca;
  const Shape batch_a(ma.sizes().begin(), ma.sizes().end() - 2);
  const Shape batch_b(cb.sizes().begin(), cb.sizes().end() - 2);
  const Shape batch = detail::broadcast_shapes(batch_a, batch_b, "matmul");
  const int64_t m = ma.size(-2);
  const int64_t n = cb.size(-1);
  Shape full_a = batch, full_b = batch;
  full_a.insert(full_a.end(), {m, ka});
  full_b.insert(full_b.end(), {kb, n});
  const int64_t batch_numel = shape_numel(batch, "matmul");
  Tensor result = dense_bmm(ma.expand(full_a).reshape({batch_numel, m, ka}),
                            cb.expand(full_b).reshape({batch_numel, kb, n}));
  Shape out_shape = batch;
  if (da != 1) out_shape.push_back(m);
  out_shape.push_back(n);
  return result.reshape(out_shape);
}

}  // namespace

namespace {

// Below this many bytes of weight the ranks' products stay apart: a weight that stays in cache from
// one rank's product to the next gains little, and stacking copies the left shards.
constexpr int64_t kStackedWeightBytes = int64_t{1} << 20;

// The ranks of `lefts`, grouped by the weight each multiplies by: its shard's identity (bytes and
// layout) when `b` is local over the same ranks, all together when `b` is plain (SPMD: every rank's).
// Groups in order of their first rank; empty when `b` is local over other ranks or cannot share.
std::vector<std::vector<int>> ranks_by_weight(const RankMap<Tensor>& lefts, const Tensor& b) {
  std::vector<std::vector<int>> groups;
  if (!b.is_local()) {
    groups.emplace_back();
    for (const auto& [rank, shard] : lefts) groups.front().push_back(rank);
    return groups;
  }
  const RankMap<Tensor>& rights = b.shards();
  const auto same_rank = [](const auto& x, const auto& y) { return x.first == y.first; };
  if (!detail::may_share_shards(b) ||
      !std::equal(lefts.begin(), lefts.end(), rights.begin(), rights.end(), same_rank))
    return groups;
  // Looked up, not searched: a thousand ranks of distinct weights must not compare every pair.
  std::map<std::vector<int64_t>, size_t> group_of;
  std::vector<int64_t> identity;
  for (const auto& [rank, shard] : rights) {
    identity.clear();
    detail::append_shard_identity(b, rank, identity);
    const auto [at, fresh] = group_of.try_emplace(identity, groups.size());
    if (fresh) groups.emplace_back();
    groups[at->second].push_back(rank);
  }
  return groups;
}

// Ranks' products with a shared right operand (a replicated or plain weight times per-rank
// activations, the linear layer of data parallelism; a weight sharded over tensor parallelism and
// replicated over data parallelism, shared by each data-parallel group) as one bmm per group of
// ranks sharing a weight, over the group's stacked left shards, whose right operand is the weight
// for every item (batch stride 0): a backend can then read the weight once per pass for the group
// instead of once per rank (the CPU backend makes it one product of all the rows). On host memory
// each item's bits are mm's (KERNELS.md), so nothing changes but the time; device backends
// (cuBLAS) may pick other algorithms for a batch, so they stay per rank, and the bits never depend
// on how many ranks a process hosts. A rank alone with its weight computes its own mm. Rank r's
// result is its item of its group's output, a region no other rank's result overlaps. Empty when
// the arguments are anything else or no two ranks share a weight (the per-rank path then
// computes, or names what is wrong). The cheap checks on the weight come first: every local mm
// passes through here.
std::optional<Tensor> stacked_over_shared_weight(const Tensor& a, const Tensor& b) {
  if (!a.is_local()) return std::nullopt;
  const RankMap<Tensor>& lefts = a.shards();
  if (lefts.size() < 2) return std::nullopt;
  const Tensor& any_weight = b.is_local() ? b.shards().begin()->second : b;
  const TensorImpl& w = *any_weight.impl();
  if (w.dim() != 2 || !is_floating(w.dtype()) || w.backend().device_type() != kDLCPU ||
      w.storage()->data == nullptr ||
      w.numel() * static_cast<int64_t>(itemsize(w.dtype())) < kStackedWeightBytes)
    return std::nullopt;
  const TensorImpl& first_left = *lefts.begin()->second.impl();
  if (first_left.dim() != 2) return std::nullopt;
  for (const auto& [rank, shard] : lefts) {
    const TensorImpl& x = *shard.impl();
    const TensorImpl& wr = b.is_local() ? *b.shard(rank).impl() : w;
    if (x.sizes() != first_left.sizes() || wr.dim() != 2 || x.sizes()[1] != wr.sizes()[0] ||
        x.dtype() != wr.dtype() || &x.backend() != &wr.backend() || wr.storage()->data == nullptr)
      return std::nullopt;
  }
  const std::vector<std::vector<int>> groups = ranks_by_weight(lefts, b);
  if (std::none_of(groups.begin(), groups.end(), [](const auto& g) { return g.size() > 1; }))
    return std::nullopt;
  std::vector<std::pair<int, Tensor>> shards;
  shards.reserve(lefts.size());
  for (const std::vector<int>& group : groups) {
    const Tensor weight = b.is_local() ? b.shard(group.front()) : b;
    if (group.size() == 1) {
      shards.emplace_back(group.front(), dense_mm(lefts.at(group.front()), weight));
      continue;
    }
    std::vector<Tensor> stacked_rows;
    stacked_rows.reserve(group.size());
    for (const int rank : group) stacked_rows.push_back(lefts.at(rank));
    const auto items = static_cast<int64_t>(group.size());
    const Tensor out = dense_bmm(stack(stacked_rows, 0),
                                 weight.unsqueeze(0).expand({items, weight.sizes()[0], weight.sizes()[1]}));
    for (int64_t item = 0; item < items; ++item)
      shards.emplace_back(group[static_cast<size_t>(item)], out.select(0, item));
  }
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}

template <class Dense>
Tensor product_op(const char* op, Dense dense, const Tensor& a, const Tensor& b) {
  return autograd::differentiable(
      [&] {
        // 2-d operands only, mm and matmul (a matmul of 2-d shards is their mm); bmm's shards are
        // 3-d, and 2-d ones are its per-rank path's error to name.
        if (dense != dense_bmm)
          if (std::optional<Tensor> stacked = stacked_over_shared_weight(a, b)) return std::move(*stacked);
        return detail::spmd_pure(op, dense, a, b);
      },
      [&](const Tensor& out) { autograd::record_matmul(op, a, b, out); }, a, b);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) { return product_op("mm", dense_mm, a, b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return product_op("bmm", dense_bmm, a, b); }
Tensor matmul(const Tensor& a, const Tensor& b) { return product_op("matmul", dense_matmul, a, b); }

}  // namespace tessera
