// An FSDP parameter group: sharding, the flat all_gather and reduce_scatter, and the autograd
// nodes that gather again for backward and reduce the gradients.
#include "parallel/fsdp_group.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>

#include "autograd/record.hpp"
#include "parallel/mesh_product.hpp"
#include "parallel/shapes_only.hpp"
#include "ranks/made_once.hpp"
#include "tensor/memory_accounting.hpp"
#include "tensor/storage_release.hpp"
#include "tessera/autograd.hpp"
#include "tessera/dist.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
#include "tessera/observe.hpp"
#include "tessera/ops.hpp"

namespace tessera::parallel {
namespace {

// Rank r's shard of a local tensor, or a plain tensor itself (a process hosting one rank).
Tensor shard_of(const Tensor& t, int rank) { return t.is_local() ? t.shard(rank) : t; }

bool same_tensor(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.is_local() != b.is_local()) return false;
  return a.is_local() ? a.local_impl() == b.local_impl() : a.impl() == b.impl();
}

// Moves `dim` to the front, so that rows are what is sharded over dp.
Tensor rows_first(const Tensor& t, int64_t dim) { return (dim == 0 ? t : t.transpose(0, dim)).contiguous(); }

int64_t product_after_first(const Shape& shape) {
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

using KeyOf = std::function<std::vector<int64_t>(int rank)>;

// Whether every local tensor of `keyed` holds the very same shard object on ranks a and b.
bool same_shard_objects(const std::vector<Tensor>& keyed, int a, int b) {
  for (const Tensor& t : keyed)
    if (t.is_local() && t.shards().at(a).impl() != t.shards().at(b).impl()) return false;
  return true;
}

// The per-rank results of f as tensors shaped like `like` (local or plain): element i of the
// result holds every rank's f(rank)[i] (f gives the same number of tensors on every rank). On a
// shapes-only backend, where f's results are fixed by the shapes that key(rank) names, f runs once
// per distinct key and the other ranks with that key get replicas: with equal shards everywhere,
// once in all. `keyed` holds the tensors whose shards key(rank) reads (numbers it adds must follow
// from those shards' shapes): where ranks share results (shapes only, no MemoryCounter watching), a
// rank holding the very same shard objects as the rank before has its key and result, found
// without making the key.
std::vector<Tensor> per_rank_each(const Tensor& like, const std::function<std::vector<Tensor>(int rank)>& f,
                                  const KeyOf& key, const std::vector<Tensor>& keyed) {
  auto off = maybe_disable_local_mode();
  if (!like.is_local()) return f(static_cast<int>(current_rank().as_int()));
  const bool share = shapes_only(like);
  const bool same_objects_share = share && detail::shares_shapes_only_results(like);
  detail::MadeOnce<std::vector<Tensor>> made(share);
  std::vector<std::vector<std::pair<int, Tensor>>> shards;
  int previous = -1;
  for (const auto& [rank, shard] : like.shards()) {
    const int r = rank;
    if (same_objects_share && previous >= 0 && same_shard_objects(keyed, r, previous)) {
      // replica_of is the result itself here: the rank before's objects, as MadeOnce would give.
      for (auto& each : shards) each.emplace_back(r, each.back().second);
      previous = r;
      continue;
    }
    const std::vector<Tensor> mine = made.get(share ? key(r) : std::vector<int64_t>{}, [&] { return f(r); });
    if (shards.empty()) {
      shards.resize(mine.size());
      for (auto& each : shards) each.reserve(like.shards().size());
    }
    for (size_t i = 0; i < mine.size(); ++i) shards[i].emplace_back(r, mine[i]);
    previous = r;
  }
  std::vector<Tensor> out;
  out.reserve(shards.size());
  for (auto& each : shards) out.push_back(local_tensor(RankMap<Tensor>(std::move(each))));
  return out;
}

// per_rank_each for an f that gives one tensor per rank.
Tensor per_rank(const Tensor& like, const std::function<Tensor(int rank)>& f, const KeyOf& key,
                const std::vector<Tensor>& keyed) {
  return per_rank_each(
             like, [&](int rank) { return std::vector<Tensor>{f(rank)}; }, key, keyed)
      .front();
}

// The key of a tensor's shard on a rank: its shape.
std::vector<int64_t> shape_key(const Tensor& t, int rank) {
  std::vector<int64_t> key;
  append_shape(key, shard_of(t, rank).sizes());
  return key;
}

}  // namespace

FsdpGroup::FsdpGroup(const std::vector<std::pair<std::string, nn::Parameter>>& parameters,
                     const FullyShardOptions& options, std::string where)
    : options_(options), where_(std::move(where)) {
  const DeviceMesh& dp = options_.mesh;
  const int64_t n = dp.size();
  const NoGradGuard no_grad;
  // The dp x tp mesh of each tensor-parallel mesh met: a block's parameters share one, and spanning
  // it walks every rank. The same mesh with another topology of its own spans another product.
  std::vector<std::pair<DeviceMesh, DeviceMesh>> products;  // tp mesh -> dp x tp mesh
  const auto product_with = [&](const DeviceMesh& tp) -> const DeviceMesh& {
    for (const auto& [known, both] : products)
      if (known == tp && known.has_own_topology() == tp.has_own_topology() &&
          (!tp.has_own_topology() || known.topology().fingerprint() == tp.topology().fingerprint()))
        return both;
    return products.emplace_back(tp, mesh_product(dp, tp)).second;
  };
  for (const auto& [name, slot] : parameters) {
    Param p;
    p.name = name;
    p.slot = slot;
    const bool requires_grad = slot.requires_grad();
    const std::string what = fmt::format("{}: parameter '{}'", where_, name);
    if (slot.is_dtensor()) {
      const DTensor& value = slot.dtensor();
      if (value.device_mesh().ndim() != 1 || value.placements()[0].is_partial())
        throw Error(
            fmt::format("{} is a DTensor with placements {} on {}; fully_shard takes plain parameters or "
                        "tensor-parallel ones (Shard or Replicate on a 1-d mesh)",
                        what, placements_text(value.placements()), value.device_mesh().to_string()));
      p.tp_mesh = value.device_mesh();
      p.tp_placement = value.placements()[0];
      if (p.tp_placement.is_shard() && p.tp_placement.dim() < 0)
        p.tp_placement = p.tp_placement.with_dim(p.tp_placement.dim() + value.dim());
      p.global = value.shape();
      p.shard_dim = p.tp_placement.is_shard(0) && value.dim() > 1 ? 1 : 0;
      p.length = p.global[static_cast<size_t>(p.shard_dim)];
      Placement dp_placement = Shard(p.shard_dim);
      if (p.tp_placement.is_shard(p.shard_dim)) {
        // Tensor parallelism shards the only dim: dp shards each tensor-parallel block in turn (a
        // strided shard, as PyTorch), so gathering over dp gives back a rank's block.
        const int64_t blocks = p.tp_mesh->size();
        if (p.length % blocks != 0)
          throw Error(
              fmt::format("{} has shape [{}], sharded over {} tensor-parallel ranks on its only dim; "
                          "FSDP shards within those blocks and needs them equal: a length divisible by {}",
                          what, fmt::join(p.global, ", "), blocks, blocks));
        dp_placement = StridedShard(p.shard_dim, blocks);
        p.length /= blocks;
      }
      const DeviceMesh& both = product_with(*p.tp_mesh);
      const DTensor replicated(value.to_local().detach(), both, {Replicate(), p.tp_placement}, p.global);
      p.sharded = replicated.redistribute({dp_placement, p.tp_placement});
    } else {
      const Tensor& value = slot.tensor();
      if (value.is_local())
        throw Error(
            fmt::format("{} is a local tensor (one value per rank); FSDP shards one full parameter: make "
                        "the module outside LocalMode",
                        what));
      if (value.dim() == 0) throw Error(fmt::format("{} is 0-d; FSDP shards dim 0", what));
      p.global = value.sizes();
      p.sharded = distribute_tensor(value.detach(), dp, {Shard(0)});
      p.length = p.global[0];
    }
    p.chunk = (p.length + n - 1) / n;
    p.sharded->set_requires_grad(requires_grad);
    // The pack and unpack below place rank c's rows at [c * chunk, ...): check the layout agrees.
    const Tensor& local = p.sharded->to_local();
    for (int rank : (local.is_local() ? local.ranks().ranks() : std::vector<int>{})) {
      if (shard_of(local, rank).size(p.shard_dim) != rows_of(p, dp_rank_of(rank)))
        throw Error(
            fmt::format("{}: rank {} holds {} rows of dim {}, but FSDP expects {} (rows split in chunks "
                        "of {})",
                        what, rank, shard_of(local, rank).size(p.shard_dim), p.shard_dim,
                        rows_of(p, dp_rank_of(rank)), p.chunk));
    }
    detail::tag_memory(p.sharded->to_local(), "parameters");
    p.slot.set(*p.sharded);
    params_.push_back(std::move(p));
  }
}

int64_t FsdpGroup::dp_rank_of(int rank) const { return options_.mesh.coordinate_of(rank).at(0); }

int64_t FsdpGroup::rows_of(const Param& p, int64_t dp_rank) const {
  return std::clamp<int64_t>(p.length - dp_rank * p.chunk, 0, p.chunk);
}

Tensor FsdpGroup::any_sharded_local() const { return params_.front().sharded->to_local(); }

Tensor FsdpGroup::pack_shards(int rank) const {
  std::vector<Tensor> parts;
  for (const Param& p : params_) {
    Tensor shard = rows_first(shard_of(p.sharded->to_local(), rank), p.shard_dim);
    if (options_.mp_policy.param_dtype) shard = shard.to(*options_.mp_policy.param_dtype);
    Shape padded_shape = shard.sizes();
    padded_shape[0] = p.chunk;
    Tensor padded = zeros(padded_shape, TensorOptions(shard.dtype()).backend(shard.backend()));
    if (shard.size(0) > 0) padded.narrow(0, 0, shard.size(0)).copy_(shard);
    parts.push_back(padded.flatten());
  }
  return cat(parts, 0);
}

std::vector<Tensor> FsdpGroup::unpack_gathered(int rank, const Tensor& gathered) const {
  const int64_t n = options_.mesh.size();
  const int64_t total = gathered.numel() / n;
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (const Param& p : params_) {
    Shape rows_shape = rows_first(shard_of(p.sharded->to_local(), rank), p.shard_dim).sizes();
    const int64_t rest = product_after_first(rows_shape);
    std::vector<Tensor> pieces;
    for (int64_t c = 0; c < n; ++c) {
      const int64_t rows = rows_of(p, c);
      if (rows == 0) continue;
      rows_shape[0] = rows;
      pieces.push_back(gathered.narrow(0, c * total + offset, rows * rest).view(rows_shape));
    }
    // Its own storage, whole: release_storage and restore_storage work on it.
    const Tensor full = pieces.size() == 1 ? pieces.front().clone() : cat(pieces, 0);
    out.push_back(rows_first(full, p.shard_dim));
    offset += p.chunk * rest;
  }
  return out;
}

std::vector<Tensor> FsdpGroup::gather() const {
  const NoGradGuard no_grad;
  const Tensor like = any_sharded_local();
  // What a rank packs and unpacks depends on the shapes of its parameter shards.
  const KeyOf shard_shapes = [&](int rank) {
    std::vector<int64_t> key;
    for (const Param& p : params_) append_shape(key, shard_of(p.sharded->to_local(), rank).sizes());
    return key;
  };
  std::vector<Tensor> sharded_locals;
  for (const Param& p : params_) sharded_locals.push_back(p.sharded->to_local());
  const Tensor flat = per_rank(
      like, [&](int rank) { return pack_shards(rank); }, shard_shapes, sharded_locals);
  const int64_t n = options_.mesh.size();
  Tensor gathered = per_rank(
      like,
      [&](int rank) {
        const Tensor f = shard_of(flat, rank);
        return tessera::empty({n * f.numel()}, TensorOptions(f.dtype()).backend(f.backend()));
      },
      [&](int rank) { return shape_key(flat, rank); }, {flat});
  {
    const CommLabel along(options_.mesh.dim_names().empty() ? "dp" : options_.mesh.dim_names()[0],
                          "fully_shard");
    dist::all_gather_into_tensor(gathered, flat, options_.mesh.group(0));
  }
  std::vector<Tensor> unpacked_from = sharded_locals;
  unpacked_from.push_back(gathered);
  return per_rank_each(
      like, [&](int rank) { return unpack_gathered(rank, shard_of(gathered, rank)); },
      [&](int rank) {
        std::vector<int64_t> key = shard_shapes(rank);
        append_shape(key, shard_of(gathered, rank).sizes());
        return key;
      },
      unpacked_from);
}

void FsdpGroup::unshard() {
  std::vector<Tensor> sharded_locals;
  for (const Param& p : params_) sharded_locals.push_back(p.sharded->to_local());
  const bool recording = autograd::any_requires_grad(sharded_locals);
  // Still unsharded (the root between forward and backward, or reshard_after_forward off): the
  // slots hold the values already. Unless this forward records and those values are an earlier
  // forward's whose backward has not run (micro-batches of a pipeline step: several forwards, then
  // their backwards one by one): each backward reduces its own forward's gradients once, so this
  // forward gathers values of its own.
  if (gathered_ && !(recording && slots_await_backward_)) return;
  const std::vector<Tensor> values = gather();
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i].unsharded = values[i];
    detail::tag_memory(values[i], "parameters");
  }
  // Each forward's unsharded tensors are its own: the node that reduces their gradients and the
  // node that gathers them again for backward hold them, whatever later forwards do.
  in_backward_ = recording;
  slots_await_backward_ = recording;
  if (in_backward_) {
    auto self = shared_from_this();
    autograd::record_node(
        "FSDPUnshardBackward", sharded_locals, values,
        [self, values](std::vector<Tensor>& grads) { return self->reduce_gradients(grads, values); });
  }
  for (Param& p : params_) {
    if (p.tp_mesh) {
      p.slot.set(DTensor(p.unsharded, *p.tp_mesh, {p.tp_placement}, p.global));
    } else {
      p.slot.set(p.unsharded);
    }
  }
  gathered_ = true;
}

void FsdpGroup::after_forward(nn::Value& output) {
  // The root keeps its values for the backward that follows at once; a forward that recorded no
  // backward (eval, no_grad) reshards everywhere, so no stale values outlive an optimizer step.
  if (is_root_ && in_backward_) return;
  if (!options_.reshard_after_forward && in_backward_) return;
  std::vector<Tensor> released;
  for (Param& p : params_) {
    p.slot.set(*p.sharded);
    release_storage(p.unsharded);
    released.push_back(p.unsharded);
    p.unsharded = Tensor();
  }
  gathered_ = false;
  slots_await_backward_ = false;
  if (in_backward_) output = gather_when_backward_arrives(output, released);
}

nn::Value FsdpGroup::gather_when_backward_arrives(const nn::Value& output,
                                                  const std::vector<Tensor>& released) {
  const Tensor& local = output.local();
  if (!autograd::any_requires_grad(std::vector<Tensor>{local})) return output;
  Tensor alias;
  {
    const NoGradGuard no_grad;
    alias = local.view(local.shape());
  }
  auto self = shared_from_this();
  autograd::record_node("FSDPPreBackward", std::vector<Tensor>{local}, std::vector<Tensor>{alias},
                        [self, released](std::vector<Tensor>& grads) {
                          self->gather_into(released);
                          return std::vector<Tensor>{grads.at(0)};
                        });
  if (!output.is_dtensor()) return alias;
  const DTensor& d = output.dtensor();
  return DTensor(alias, d.device_mesh(), d.placements(), d.shape());
}

void FsdpGroup::gather_into(const std::vector<Tensor>& released) {
  if (!storage_released(released.front())) return;  // already gathered by another output's node
  const std::vector<Tensor> values = gather();
  for (size_t i = 0; i < released.size(); ++i) restore_storage(released[i], values[i]);
}

std::vector<Tensor> FsdpGroup::reduce_gradients(const std::vector<Tensor>& unsharded_grads,
                                                const std::vector<Tensor>& unsharded) {
  const NoGradGuard no_grad;
  const int64_t n = options_.mesh.size();
  std::vector<size_t> reduced;  // parameters that got a gradient; unused ones get none, as in PyTorch
  for (size_t i = 0; i < params_.size(); ++i)
    if (unsharded_grads[i].defined()) reduced.push_back(i);
  std::vector<Tensor> out(params_.size());
  if (!reduced.empty()) {
    const Tensor like = any_sharded_local();
    const auto reduce_dtype = [&](const Tensor& g) {
      return options_.mp_policy.reduce_dtype ? g.to(*options_.mp_policy.reduce_dtype) : g;
    };
    // Rank r's input: for each dp rank c, every parameter's rows [c * chunk, (c + 1) * chunk).
    const KeyOf grad_shapes = [&](int rank) {
      std::vector<int64_t> key;
      for (size_t i : reduced) append_shape(key, shard_of(unsharded_grads[i], rank).sizes());
      return key;
    };
    const auto pack_gradients = [&](int rank) {
      std::vector<std::vector<Tensor>> blocks(static_cast<size_t>(n));
      for (size_t i : reduced) {
        const Param& p = params_[i];
        const Tensor g = rows_first(reduce_dtype(shard_of(unsharded_grads[i], rank)), p.shard_dim);
        Shape padded_shape = g.sizes();
        padded_shape[0] = n * p.chunk;
        Tensor padded = zeros(padded_shape, TensorOptions(g.dtype()).backend(g.backend()));
        if (g.size(0) > 0) padded.narrow(0, 0, g.size(0)).copy_(g);
        for (int64_t c = 0; c < n; ++c)
          blocks[static_cast<size_t>(c)].push_back(padded.narrow(0, c * p.chunk, p.chunk).flatten());
      }
      std::vector<Tensor> flat;
      for (auto& block : blocks) flat.push_back(cat(block, 0));
      return cat(flat, 0);
    };
    std::vector<Tensor> grads, sharded_locals;
    for (size_t i : reduced) {
      grads.push_back(unsharded_grads[i]);
      sharded_locals.push_back(params_[i].sharded->to_local());
    }
    const Tensor input = per_rank(like, pack_gradients, grad_shapes, grads);
    Tensor output = per_rank(
        like,
        [&](int rank) {
          const Tensor f = shard_of(input, rank);
          return tessera::empty({f.numel() / n}, TensorOptions(f.dtype()).backend(f.backend()));
        },
        [&](int rank) { return shape_key(input, rank); }, {input});
    {
      const CommLabel along(options_.mesh.dim_names().empty() ? "dp" : options_.mesh.dim_names()[0],
                            "fully_shard");
      dist::reduce_scatter_tensor(output, input, ReduceOp::AVG, options_.mesh.group(0));
    }
    // A rank's parts depend on the shapes of its parameter shards, of its output and on the rows its
    // dp rank holds (its parameter shards' rows: the constructor checks that they agree).
    const auto part_shapes = [&](int rank) {
      std::vector<int64_t> key = shape_key(output, rank);
      for (size_t i : reduced) {
        append_shape(key, shard_of(params_[i].sharded->to_local(), rank).sizes());
        key.push_back(rows_of(params_[i], dp_rank_of(rank)));
      }
      return key;
    };
    const auto unpack_gradients = [&](int rank) {
      std::vector<Tensor> parts;
      int64_t at = 0;  // where parameter i's rows start in this rank's output
      for (size_t i : reduced) {
        const Param& p = params_[i];
        Shape shape = rows_first(shard_of(p.sharded->to_local(), rank), p.shard_dim).sizes();
        const int64_t rest = product_after_first(shape);
        shape[0] = p.chunk;
        const Tensor mine = shard_of(output, rank).narrow(0, at, p.chunk * rest).view(shape);
        parts.push_back(
            rows_first(mine.narrow(0, 0, rows_of(p, dp_rank_of(rank))), p.shard_dim).to(p.sharded->dtype()));
        at += p.chunk * rest;
      }
      return parts;
    };
    std::vector<Tensor> unpacked_from = sharded_locals;
    unpacked_from.push_back(output);
    const std::vector<Tensor> parts = per_rank_each(like, unpack_gradients, part_shapes, unpacked_from);
    for (size_t k = 0; k < reduced.size(); ++k) out[reduced[k]] = parts[k];
  }
  // The gradients are reduced: this forward's unsharded values are no longer needed.
  for (const Tensor& t : unsharded)
    if (!storage_released(t)) release_storage(t);
  if (gathered_ && same_tensor(params_.front().unsharded, unsharded.front())) {
    // The slots held this forward's values (the root): back to the shards.
    for (Param& p : params_) {
      p.slot.set(*p.sharded);
      p.unsharded = Tensor();
    }
    gathered_ = false;
    slots_await_backward_ = false;
  }
  in_backward_ = false;
  return out;
}

}  // namespace tessera::parallel
