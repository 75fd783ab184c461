// Matrix products: mm and bmm kernels; matmul maps torch.matmul's rules onto them.
#include <fmt/format.h>

#include <algorithm>
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

// Whether every rank's shard of local `b` is the same bytes in the same layout (replicas).
bool one_value_on_every_rank(const Tensor& b) {
  if (!detail::may_share_shards(b)) return false;
  std::vector<int64_t> first, identity;
  detail::append_shard_identity(b, b.shards().begin()->first, first);
  for (const auto& [rank, shard] : b.shards()) {
    identity.clear();
    detail::append_shard_identity(b, rank, identity);
    if (identity != first) return false;
  }
  return true;
}

// Ranks' products with one shared right operand (a replicated or plain weight times per-rank
// activations, the linear layer of data and tensor parallelism) as one bmm over the stacked left
// shards, whose right operand is the weight for every item (batch stride 0): a backend can then
// read the weight once per pass for all ranks instead of once per rank (the CPU backend makes it
// one product of all the rows). On host memory each item's bits are mm's (KERNELS.md), so nothing
// changes but the time; device backends (cuBLAS) may pick other algorithms for a batch, so they
// stay per rank, and the bits never depend on how many ranks a process hosts. Rank r's result is
// item r of the output, a region no other rank's result overlaps. Empty when the arguments are
// anything else (the per-rank path then computes, or names what is wrong). The cheap checks on
// the weight come first: every local mm passes through here.
std::optional<Tensor> stacked_over_shared_weight(const Tensor& a, const Tensor& b) {
  if (!a.is_local()) return std::nullopt;
  const RankMap<Tensor>& lefts = a.shards();
  if (lefts.size() < 2) return std::nullopt;
  // A plain weight is every rank's (SPMD: passed unchanged to each); a local one must be replicas
  // over the same ranks.
  const Tensor& weight = b.is_local() ? b.shards().begin()->second : b;
  const TensorImpl& w = *weight.impl();
  if (w.dim() != 2 || !is_floating(w.dtype()) || w.backend().device_type() != kDLCPU ||
      w.storage()->data == nullptr ||
      w.numel() * static_cast<int64_t>(itemsize(w.dtype())) < kStackedWeightBytes)
    return std::nullopt;
  if (b.is_local()) {
    const RankMap<Tensor>& rights = b.shards();
    const auto same_rank = [](const auto& x, const auto& y) { return x.first == y.first; };
    if (!std::equal(lefts.begin(), lefts.end(), rights.begin(), rights.end(), same_rank) ||
        !one_value_on_every_rank(b))
      return std::nullopt;
  }
  const TensorImpl& first_left = *lefts.begin()->second.impl();
  if (first_left.dim() != 2 || first_left.sizes()[1] != w.sizes()[0]) return std::nullopt;
  std::vector<Tensor> stacked_rows;
  stacked_rows.reserve(lefts.size());
  for (const auto& [rank, shard] : lefts) {
    const TensorImpl& x = *shard.impl();
    if (x.sizes() != first_left.sizes() || x.dtype() != w.dtype() || &x.backend() != &w.backend())
      return std::nullopt;
    stacked_rows.push_back(shard);
  }
  const auto ranks = static_cast<int64_t>(lefts.size());
  const Tensor out =
      dense_bmm(stack(stacked_rows, 0), weight.unsqueeze(0).expand({ranks, w.sizes()[0], w.sizes()[1]}));
  std::vector<std::pair<int, Tensor>> shards;
  shards.reserve(lefts.size());
  int64_t item = 0;
  for (const auto& [rank, shard] : lefts) shards.emplace_back(rank, out.select(0, item++));
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}

template <class Dense>
Tensor product_op(const char* op, Dense dense, const Tensor& a, const Tensor& b) {
  return autograd::differentiable(
      [&] {
        // 2-d operands only: a bmm's shards are 3-d, a matmul of 2-d shards is their mm.
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
