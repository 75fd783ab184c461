// DTensor construction, distribute_tensor, from_local, full_tensor, redistribute.
#include "tessera/dtensor.hpp"

#include <map>
#include <ostream>

#include <fmt/format.h>

#include "autograd/meta.hpp"
#include "autograd/record.hpp"
#include "comm/labels.hpp"
#include "dispatch/user_call.hpp"
#include "dtensor/grad_layout.hpp"
#include "dtensor/held_lengths.hpp"
#include "dtensor/layout.hpp"
#include "dtensor/mesh_device.hpp"
#include "dtensor/redistribute.hpp"
#include "tensor/local_tensor_impl.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/autograd.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/dist.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"
#include "tessera/ops.hpp"
#include "world/world.hpp"

namespace tessera {
namespace {

// The mesh's ranks whose shards are held here: all of them in a simulated world, this process's in
// a distributed one, and the running rank alone in a rank's program (ts::spawn).
std::vector<int> hosted_mesh_ranks(const DeviceMesh& mesh) {
  std::vector<int> ranks;
  for (int r : mesh.ranks())
    if (world::holds_rank(r)) ranks.push_back(r);
  if (ranks.empty())
    if (const world::RunningProgram* program = world::running_program())
      throw Error(
          fmt::format("DTensor on rank {}'s program (ts::spawn): the mesh {} does not hold rank {}; a "
                      "rank lays DTensors out only on meshes it belongs to",
                      program->rank, mesh.to_string(), program->rank));
  return ranks;
}

void require_mesh_ranks(const char* op, const Tensor& local, const DeviceMesh& mesh) {
  const RankSet mesh_ranks(hosted_mesh_ranks(mesh));
  if (local.ranks() != mesh_ranks) {
    const world::RunningProgram* program = world::running_program();
    const std::string where = program != nullptr
                                  ? fmt::format(" held by rank {}'s program (ts::spawn)", program->rank)
                              : world::current().distributed() ? " hosted by this process"
                                                               : "";
    throw Error(fmt::format("{}: the local tensor has ranks {} but the mesh has ranks {}{}", op,
                            local.ranks().to_string(), mesh_ranks.to_string(), where));
  }
}

}  // namespace

DTensor::DTensor(Tensor local, const DeviceMesh& mesh, const Placements& placements, Shape global_shape)
    : local_(std::move(local)), mesh_(mesh), global_shape_(std::move(global_shape)) {
  if (!local_.defined() || !local_.is_local())
    throw Error("DTensor: the local part must be a local tensor (one shard per mesh rank)");
  require_mesh_ranks("DTensor", local_, mesh_);
  placements_ =
      dtensor::bind(placements, mesh_.ndim(), static_cast<int64_t>(global_shape_.size()), "DTensor");
  // Every rank's shard must have its coordinate's local shape. Lengths are worked out per distinct
  // coordinate that matters, and where every coordinate has one shape and so do the shards (the
  // usual even layout), one comparison checks every rank.
  std::vector<dtensor::HeldLengths> lengths;
  bool one_shape = true;
  Shape expected(global_shape_.size());
  for (size_t d = 0; d < global_shape_.size(); ++d) {
    dtensor::HeldLengths& held = lengths.emplace_back(global_shape_[d], static_cast<int64_t>(d), placements_,
                                                      mesh_.shape(), placements_.size());
    expected[d] = held.widest();
    one_shape = one_shape && held.narrowest() == expected[d];
  }
  const std::optional<Shape>& shard_sizes = local_.local_impl()->uniform_sizes();
  if (one_shape && shard_sizes && *shard_sizes == expected) return;
  for (const auto& [rank, shard] : local_.shards()) {
    const std::vector<int64_t> coord = mesh_.coordinate_of(rank);
    for (size_t d = 0; d < expected.size(); ++d) expected[d] = lengths[d].at(coord);
    if (shard.sizes() != expected)
      throw Error(fmt::format("DTensor: rank {} holds a shard of shape {}, but {} of a {} tensor gives it {}",
                              rank, shape_text(shard.sizes()), placements_text(placements_),
                              shape_text(global_shape_), shape_text(expected)));
  }
}

int64_t DTensor::size(int64_t d) const {
  // normalize_dim accepts dims 0 and -1 of a 0-d tensor (as torch's dim wrapping does), which has no size to
  // read.
  if (dim() == 0) throw Error(fmt::format("size: cannot take dim {} of a 0-d DTensor, which has no dims", d));
  return global_shape_[static_cast<size_t>(normalize_dim(d, dim(), "size"))];
}

Tensor DTensor::full_tensor() const {
  const dispatch::UserCall call("DTensor::full_tensor");  // names it in missing-kernel errors
  return redistribute(Placements(placements_.size(), Replicate())).to_local();
}

DTensor DTensor::redistribute(const Placements& placements) const {
  const dispatch::UserCall call("DTensor::redistribute");
  return DTensor(dtensor::differentiable_redistribute(*this, placements, false), mesh_, placements,
                 global_shape_);
}

DTensor DTensor::redistribute(const DeviceMesh& mesh, const Placements& placements) const {
  if (!(mesh == mesh_))
    throw Error(
        fmt::format("redistribute: moving between meshes is not supported ({} -> {}); distribute the full "
                    "tensor on the new mesh instead",
                    mesh_.to_string(), mesh.to_string()));
  return redistribute(placements);
}

DTensor& DTensor::set_requires_grad(bool requires_grad) {
  local_.set_requires_grad(requires_grad);
  if (requires_grad) autograd::ensure_meta(local_)->dtensor_leaf = true;
  return *this;
}

namespace {
// The placements of a gradient laid out `layout` whose ranks' values are still to be reduced.
Placements pending_placements(Placements layout, const autograd::AutogradMeta::PendingGrad& pending) {
  for (const auto& [mesh_dim, average] : pending.reductions)
    layout[static_cast<size_t>(mesh_dim)] = Partial(average ? "avg" : "sum");
  return layout;
}
}  // namespace

bool DTensor::has_grad() const {
  const autograd::AutogradMeta* meta = autograd::meta_of(local_);
  return meta != nullptr && (meta->grad.defined() || !meta->pending_grads.empty());
}

DTensor DTensor::grad() const {
  autograd::AutogradMeta* meta = autograd::meta_of(local_);
  if (meta == nullptr || (!meta->grad.defined() && meta->pending_grads.empty()))
    throw Error(
        fmt::format("grad: this DTensor ({}) has no gradient yet; run backward() on something computed from "
                    "it after set_requires_grad(true) (has_grad() tells)",
                    placements_text(placements_)));
  const Placements layout = dtensor::grad_placements(placements_);
  if (!meta->grad.defined() && meta->pending_grads.size() == 1) {
    const auto& pending = meta->pending_grads.front();
    return DTensor(pending.value, mesh_, pending_placements(layout, pending), global_shape_);
  }
  // Contributions pending over different mesh dims (or beside reduced ones) cannot be shown as one
  // Partial: they are reduced into the gradient now, once.
  NoGradGuard off;
  for (const auto& pending : meta->pending_grads) {
    const DTensor partial(pending.value, mesh_, pending_placements(layout, pending), global_shape_);
    const Tensor reduced = dtensor::redistribute_local(partial, layout, false);
    meta->grad = meta->grad.defined() ? meta->grad + reduced : reduced;
  }
  meta->pending_grads.clear();
  return DTensor(meta->grad, mesh_, layout, global_shape_);
}

DTensor& DTensor::zero_grad(bool set_to_none) {
  local_.zero_grad(set_to_none);
  return *this;
}

void DTensor::backward(const std::optional<DTensor>& gradient, bool retain_graph) const {
  if (!gradient) {
    int64_t numel = 1;
    for (int64_t s : global_shape_) numel *= s;
    if (numel != 1)
      throw Error(fmt::format(
          "backward: a gradient can be created implicitly only for a DTensor of one element; this "
          "one has shape {}: pass a gradient DTensor of that shape",
          shape_text(global_shape_)));
    local_.backward(Tensor(), retain_graph);
    return;
  }
  if (gradient->shape() != global_shape_ || !(gradient->device_mesh() == mesh_))
    throw Error(fmt::format("backward: the gradient is {} on {}, but the DTensor is {} on {}",
                            shape_text(gradient->shape()), gradient->device_mesh().to_string(),
                            shape_text(global_shape_), mesh_.to_string()));
  Tensor seed;
  {
    NoGradGuard off;
    seed = dtensor::redistribute_local(*gradient, dtensor::grad_placements(placements_), false);
  }
  local_.backward(seed, retain_graph);
}

DTensor DTensor::detach() const { return DTensor(local_.detach(), mesh_, placements_, global_shape_); }

std::ostream& operator<<(std::ostream& os, const DTensor& tensor) {
  return os << "DTensor(local_tensor=" << tensor.to_local()
            << ", device_mesh=" << tensor.device_mesh().to_string()
            << ", placements=" << placements_repr(tensor.placements()) << ")";
}

std::string DTensor::to_string() const {
  return fmt::format("DTensor(shape={}, placements={}, mesh={}, dtype={})", shape_text(global_shape_),
                     placements_text(placements_), mesh_.to_string(), dtype_name(dtype()));
}

namespace {
DTensor distribute_untracked(const Tensor& given, const DeviceMesh& mesh, const Placements& placements) {
  const Tensor tensor = dtensor::on_mesh_device(given, mesh);
  for (const Placement& p : placements)
    if (p.is_partial())
      throw Error(
          fmt::format("distribute_tensor: {} is not allowed (a pending reduction has no source value); use "
                      "Shard or Replicate",
                      p.to_string()));
  const Placements bound = dtensor::bind(placements, mesh.ndim(), tensor.dim(), "distribute_tensor");
  if (tensor.is_local()) {
    // Group rank 0 of every mesh dim is the source, as in PyTorch: mesh dims left to right, a
    // Shard scatters the pieces of what group rank 0 holds, a Replicate broadcasts it.
    require_mesh_ranks("distribute_tensor", tensor, mesh);
    const Shape& global = tensor.sizes();  // shards must agree in shape
    // The steps below start from the caller's shards without copying them: replicas share their
    // bytes copy-on-write, so a broadcast's in-place result (or any write) leaves the caller's alone.
    std::vector<std::pair<int, Tensor>> own;
    own.reserve(tensor.shards().size());
    for (const auto& [rank, shard] : tensor.shards()) own.emplace_back(rank, Tensor(shard.impl()->replica()));
    Tensor local = local_tensor(RankMap<Tensor>(std::move(own)));
    Placements applied(bound.size(), Replicate());
    for (size_t i = 0; i < bound.size(); ++i) {
      if (bound[i].is_shard()) {
        local = dtensor::scatter_shard(local, mesh, global, applied, i, bound[i]);
        applied[i] = bound[i];
        continue;
      }
      const comm::LabelScope along(mesh.dim_names().empty() ? fmt::format("dim {}", i) : mesh.dim_names()[i],
                                   "distribute_tensor");
      dist::broadcast(local, 0, mesh.group(static_cast<int64_t>(i)));
    }
    return DTensor(local, mesh, bound, global);
  }
  // A plain tensor is what every rank holds already: each takes its part, no communication. Each
  // distinct part is copied once, into storage of the part's size; ranks that hold the same part
  // (they differ only along Replicate dims) share that copy as replicas (copy-on-write).
  std::vector<std::pair<int, Tensor>> shards;
  {
    DisabledLocalMode plain;
    std::map<std::vector<int64_t>, Tensor> copies;  // the held ranges, flattened -> their copy
    // What a rank holds depends on its coordinates along the mesh dims that shard alone
    // (dtensor::held): the part of each such coordinate is found once, not once per rank.
    std::map<std::vector<int64_t>, Tensor> by_sharding_coord;
    const std::vector<int> hosted = hosted_mesh_ranks(mesh);
    shards.reserve(hosted.size());
    for (int r : hosted) {
      const std::vector<int64_t> coord = mesh.coordinate_of(r);
      std::vector<int64_t> sharding_coord;
      for (size_t i = 0; i < bound.size(); ++i)
        if (bound[i].is_shard()) sharding_coord.push_back(coord[i]);
      if (const auto known = by_sharding_coord.find(sharding_coord); known != by_sharding_coord.end()) {
        shards.emplace_back(r, detail::replica_of(known->second));
        continue;
      }
      std::vector<dtensor::Segments> parts;
      std::vector<int64_t> key;
      for (int64_t d = 0; d < tensor.dim(); ++d) {
        parts.push_back(dtensor::held(tensor.size(d), d, bound, mesh.shape(), coord, bound.size()));
        for (const tessera_segment& s : parts.back()) key.insert(key.end(), {d, s.offset, s.length});
      }
      auto [copy, first] = copies.try_emplace(std::move(key));
      if (first) {
        Tensor part = tensor;
        for (int64_t d = 0; d < tensor.dim(); ++d)
          part = dtensor::take(part, d, parts[static_cast<size_t>(d)]);
        // A part that is the whole (contiguous) tensor is not copied at all: the shards share the
        // caller's bytes copy-on-write, so a write to either side copies first.
        const bool whole = part.sizes() == tensor.sizes() && tensor.impl()->is_contiguous();
        copy->second = whole ? Tensor(tensor.impl()->replica()) : part.clone();
        shards.emplace_back(r, copy->second);
      } else {
        shards.emplace_back(r, detail::replica_of(copy->second));
      }
      by_sharding_coord.emplace(std::move(sharding_coord), copy->second);
    }
  }
  return DTensor(local_tensor(RankMap<Tensor>(std::move(shards))), mesh, bound, tensor.sizes());
}
}  // namespace

DTensor distribute_tensor(const Tensor& given, const DeviceMesh& mesh, Placements placements) {
  if (!given.defined()) throw Error("distribute_tensor: the tensor is undefined");
  DTensor out = [&] {
    NoGradGuard off;
    return distribute_untracked(given, mesh, placements);
  }();
  // As in PyTorch, the result is a new leaf that requires grad when the tensor did.
  if (given.requires_grad()) out.set_requires_grad(true);
  return out;
}

namespace {
// A plain tensor given to from_local is every rank's local value: the ranks share its bytes as
// replicas (copy-on-write), so writing one rank's shard, or the tensor, leaves the others alone.
Tensor held_by_every_rank(const Tensor& plain, const DeviceMesh& mesh) {
  // In a rank's program (ts::spawn) a plain tensor is that rank's own value (an activation it
  // received, say), and the local tensor holds that rank's shard alone: its gradient is one tensor
  // again, so the wrapping is differentiable.
  const world::RunningProgram* program = world::running_program();
  if (program != nullptr && plain.requires_grad() &&
      hosted_mesh_ranks(mesh) == std::vector<int>{program->rank}) {
    const int rank = program->rank;
    Tensor local = local_tensor(RankMap<Tensor>({{rank, Tensor(plain.detach().impl()->replica())}}));
    if (!autograd::any_requires_grad(plain)) return local;
    autograd::record("FromLocalBackward", {plain}, {local},
                     [rank](std::vector<Tensor>& grads) -> std::vector<Tensor> {
                       return {grads[0].is_local() ? grads[0].shard(rank) : grads[0]};
                     });
    return local;
  }
  // Elsewhere its gradient would be a different value per rank, which one plain tensor cannot hold.
  if (plain.requires_grad())
    throw Error(
        "from_local: the plain tensor requires grad, but each rank's gradient differs and one plain tensor "
        "cannot hold them; pass a local tensor (one shard per rank), or use distribute_tensor, whose result "
        "is a new leaf");
  std::vector<std::pair<int, Tensor>> shards;
  for (int r : hosted_mesh_ranks(mesh)) shards.emplace_back(r, Tensor(plain.impl()->replica()));
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}
}  // namespace

DTensor from_local(const Tensor& given, const DeviceMesh& mesh, const Placements& placements,
                   std::optional<Shape> shape) {
  if (!given.defined()) throw Error("from_local: the tensor is undefined");
  const Tensor local = given.is_local() ? given : held_by_every_rank(given, mesh);
  require_mesh_ranks("from_local", local, mesh);
  const Placements bound = dtensor::bind(placements, mesh.ndim(), local.dim(), "from_local");
  if (shape) return DTensor(local, mesh, bound, *shape);
  // Even layout: each sharded dim is the local size times the number of shards along it.
  const auto& shards = local.shards();
  const auto& [first_rank, first] = *shards.begin();
  for (const auto& [rank, shard] : shards)
    if (shard.sizes() != first.sizes())
      throw Error(
          fmt::format("from_local: the local shards' shapes differ per rank (rank {} holds {}, rank {} holds "
                      "{}), so the global shape cannot be inferred; an uneven layout needs it given: pass "
                      "shape=... (the DTensor's global shape)",
                      first_rank, shape_text(first.sizes()), rank, shape_text(shard.sizes())));
  Shape global = first.sizes();
  for (size_t i = 0; i < bound.size(); ++i)
    if (bound[i].is_shard())
      global[static_cast<size_t>(bound[i].dim())] *= mesh.size(static_cast<int64_t>(i));
  return DTensor(local, mesh, bound, global);
}

}  // namespace tessera
