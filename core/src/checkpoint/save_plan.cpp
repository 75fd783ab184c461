#include "checkpoint/save_plan.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "checkpoint/boxes.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"
#include "tessera/world.hpp"

namespace tessera::dcp {
namespace {

// The chunk's elements as a contiguous host tensor; a view of `t` when it already is one.
Tensor host_contiguous(const Tensor& t, bool stage) {
  const Tensor host = t.backend() == "cpu" ? t : t.to("cpu");
  if (!host.is_contiguous()) return host.contiguous();  // a copy already
  // Staged bytes must not be `t`'s: a copy unless to("cpu") made one.
  return stage && host.impl() == t.impl() ? host.clone() : host;
}

Tensor box_of(const Tensor& shard, const HeldBox& box) {
  Tensor view = shard;
  for (size_t d = 0; d < box.local_offsets.size(); ++d)
    if (box.global.sizes[d] != shard.size(static_cast<int64_t>(d)))
      view = view.narrow(static_cast<int64_t>(d), box.local_offsets[d], box.global.sizes[d]);
  return view;
}

bool same_shard_bytes(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return false;
  if (a.current_address() == b.current_address()) return true;
  const Tensor ha = host_contiguous(a, false), hb = host_contiguous(b, false);
  const size_t n = static_cast<size_t>(ha.numel()) * itemsize(ha.dtype());
  return n == 0 || std::memcmp(ha.impl()->bytes_at(), hb.impl()->bytes_at(), n) == 0;
}

struct Planner {
  Planner(bool stage_bytes, RankSet hosted) : stage(stage_bytes), world_ranks(std::move(hosted)) {}

  SavePlan plan;
  bool stage;
  RankSet world_ranks;

  // Only the chunks this process writes are listed: the metadata's writer collects the others'
  // from their data files.
  void add_chunk(const std::string& key, EntryMeta& entry, ChunkMeta meta, const Tensor& bytes,
                 bool written_here) {
    if (!written_here) return;
    entry.chunks.push_back(std::move(meta));
    plan.chunks.push_back({key, entry.chunks.size() - 1, entry.dtype, host_contiguous(bytes, stage)});
  }

  void plain(const std::string& key, const Tensor& t) {
    EntryMeta entry;
    entry.kind = EntryKind::tensor;
    entry.dtype = t.dtype();
    entry.shape = t.sizes();
    ChunkMeta chunk;
    chunk.offsets.assign(entry.shape.size(), 0);
    chunk.sizes = entry.shape;
    // Every process holds the same value: the first writes it.
    add_chunk(key, entry, std::move(chunk), t, plan.process_index == 0);
    plan.metadata.entries.emplace(key, std::move(entry));
  }

  void local(const std::string& key, const Tensor& t) {
    EntryMeta entry;
    entry.kind = EntryKind::local;
    entry.dtype = t.dtype();
    // Shards equal in bytes are written once, by the lowest of their ranks.
    std::vector<std::pair<Tensor, std::vector<int>>> distinct;
    for (const auto& [rank, shard] : t.shards()) {
      bool found = false;
      for (auto& [value, ranks] : distinct)
        if (same_shard_bytes(value, shard)) {
          ranks.push_back(rank);
          found = true;
          break;
        }
      if (!found) distinct.push_back({shard, {rank}});
    }
    for (auto& [value, ranks] : distinct) {
      ChunkMeta chunk;
      chunk.sizes = value.sizes();
      chunk.offsets.assign(chunk.sizes.size(), 0);
      chunk.ranks = ranks;
      add_chunk(key, entry, std::move(chunk), value, true);
    }
    plan.metadata.entries.emplace(key, std::move(entry));
  }

  void dtensor(const std::string& key, DTensor dt) {
    const DeviceMesh& mesh = dt.device_mesh();
    if (mesh.fibres().size() != 1)
      throw Error(fmt::format(
          "checkpoint save: entry '{}' is a DTensor on a sliced mesh with {} fibres ({}); each fibre holds a "
          "tensor of its own, so there is no one global value to save; save it on the full mesh",
          key, mesh.fibres().size(), mesh.to_string()));
    Placements placements = dt.placements();
    bool partial = false;
    for (Placement& p : placements)
      if (p.is_partial()) {
        p = Replicate();
        partial = true;
      }
    if (partial) dt = dt.redistribute(placements);  // the saved value is the reduced global tensor
    EntryMeta entry;
    entry.kind = EntryKind::dtensor;
    entry.dtype = dt.dtype();
    entry.shape = dt.shape();
    entry.placements = placements_text(dt.placements());
    entry.mesh_shape = mesh.shape();
    const Tensor& local = dt.to_local();
    const RankSet hosted = local.is_local() ? local.ranks() : world_ranks;
    if (!local.is_local() && hosted.size() != 1)
      throw Error(
          fmt::format("checkpoint save: entry '{}' is a DTensor with a plain local tensor, but this process "
                      "hosts ranks {}; expected a local tensor over them",
                      key, hosted.to_string()));
    // Each distinct box once, written by the lowest rank of the mesh holding it: computed over
    // the whole mesh, so every process decides the same.
    std::map<Box, int> owner;
    for (int rank : mesh.ranks())
      for (const HeldBox& b :
           held_boxes(entry.shape, dt.placements(), mesh.shape(), mesh.coordinate_of(rank)))
        owner.emplace(b.global, rank);
    for (const auto& [box, rank] : owner) {
      ChunkMeta chunk;
      chunk.offsets = box.offsets;
      chunk.sizes = box.sizes;
      Tensor bytes;
      const bool here = hosted.contains(rank);
      if (here) {
        const Tensor shard = local.is_local() ? local.shard(rank) : local;
        for (const HeldBox& b :
             held_boxes(entry.shape, dt.placements(), mesh.shape(), mesh.coordinate_of(rank)))
          if (b.global == box) bytes = box_of(shard, b);
      }
      add_chunk(key, entry, std::move(chunk), bytes, here);
    }
    plan.metadata.entries.emplace(key, std::move(entry));
  }

  void scalar(const std::string& key, const StateValue& value) {
    EntryMeta entry;
    if (const auto* i = std::get_if<int64_t>(&value)) {
      entry.kind = EntryKind::int64;
      entry.int_value = *i;
    } else if (const auto* f = std::get_if<double>(&value)) {
      entry.kind = EntryKind::float64;
      entry.float_value = *f;
    } else {
      entry.kind = EntryKind::string;
      entry.string_value = std::get<std::string>(value);
    }
    plan.metadata.entries.emplace(key, std::move(entry));
  }
};

}  // namespace

SavePlan plan_save(const StateDict& state, bool stage) {
  const World world = current_world();
  Planner planner(stage, world.ranks());
  planner.plan.process_index = world.process_index();
  planner.plan.num_processes = world.num_processes();
  // Saving reads values: nothing is recorded, and the chunk views are plain tensors.
  NoGradGuard no_grad;
  for (const auto& [key, value] : state) {
    if (key.empty()) throw Error("checkpoint save: a state dict key is empty; every entry needs a name");
    if (const auto* t = std::get_if<Tensor>(&value)) {
      if (!t->defined()) throw Error(fmt::format("checkpoint save: entry '{}' is an undefined tensor", key));
      if (t->is_local())
        planner.local(key, *t);
      else
        planner.plain(key, *t);
    } else if (const auto* dt = std::get_if<DTensor>(&value)) {
      planner.dtensor(key, *dt);
    } else {
      planner.scalar(key, value);
    }
  }
  return std::move(planner.plan);
}

}  // namespace tessera::dcp
