#include "dtensor/redistribute.hpp"

#include <map>

#include <fmt/format.h>

#include "dtensor/held_lengths.hpp"
#include "dtensor/layout.hpp"
#include "log/log.hpp"
#include "ranks/made_once.hpp"
#include "tensor/memory_accounting.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/dist.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
#include "comm/labels.hpp"
#include "tessera/ops.hpp"

namespace tessera::dtensor {

std::string mesh_dim_label(const DeviceMesh& mesh, size_t i) {
  return mesh.dim_names().empty() ? fmt::format("dim {}", i) : mesh.dim_names()[i];
}

void all_reduce_along(Tensor& local, const DeviceMesh& mesh, size_t i, ReduceOp op) {
  const comm::LabelScope along(mesh_dim_label(mesh, i));
  dist::all_reduce(local, op, mesh.group(static_cast<int64_t>(i)));
}

namespace {

// Options for a new buffer beside `t`: its dtype on its backend (never the default backend, or
// a DTensor on any other backend would mix backends mid-redistribution).
TensorOptions beside(const Tensor& t) { return TensorOptions(t.dtype()).backend(t.backend()); }

ReduceOp reduce_op_of(const Placement& partial) {
  const std::string& op = partial.reduce_op();
  if (op == "avg") return ReduceOp::AVG;
  if (op == "min") return ReduceOp::MIN;
  if (op == "max") return ReduceOp::MAX;
  if (op == "product") return ReduceOp::PRODUCT;
  if (op == "band") return ReduceOp::BAND;
  if (op == "bor") return ReduceOp::BOR;
  if (op == "bxor") return ReduceOp::BXOR;
  return ReduceOp::SUM;
}

// A key for detail::MadeOnce: the identity of `rank`'s shard of `local` (its bytes and layout,
// detail::append_shard_identity) after the words given. Ranks holding replicas of one source get the
// first rank's result as copy-on-write replicas instead of making it again.
std::vector<int64_t> shard_key(const Tensor& local, int rank, std::vector<int64_t> words) {
  detail::append_shard_identity(local, rank, words);
  return words;
}

// Mesh dim i, currently Shard(d), becomes Replicate: every member's piece, padded to the longest,
// is gathered along the mesh dim's group, then each piece is trimmed and put back at the
// positions its layout gives it within the parent range.
Tensor unshard(const Tensor& local, const DeviceMesh& mesh, const Shape& global, const Placements& current,
               size_t i) {
  const Placement& placement = current[i];
  const int64_t d = placement.dim();
  const int64_t shards = mesh.size(static_cast<int64_t>(i));
  // The widest piece of any coordinate, from the layout: ranks hosted by other processes count too.
  const int64_t widest =
      HeldLengths(global[static_cast<size_t>(d)], d, current, mesh.shape(), current.size()).widest();

  const Tensor padded =
      map_rank_classes(local, mesh, nullptr, [&](int, const std::vector<int64_t>&, const Tensor& shard) {
        if (shard.size(d) == widest) return shard.transpose(0, d).contiguous();  // gather along dim 0
        Shape shape = shard.sizes();
        shape[static_cast<size_t>(d)] = widest;
        Tensor out = zeros(shape, beside(shard));
        out.narrow(d, 0, shard.size(d)).copy_(shard);
        return out.transpose(0, d).contiguous();
      });
  Tensor gathered =
      map_rank_classes(padded, mesh, nullptr, [&](int, const std::vector<int64_t>&, const Tensor& shard) {
        Shape shape = shard.sizes();
        shape[0] *= shards;
        return empty(shape, beside(shard));
      });
  {
    const comm::LabelScope along(mesh_dim_label(mesh, i));
    dist::all_gather_into_tensor(gathered, padded, mesh.group(static_cast<int64_t>(i)));
  }

  // Ranks of one group gathered the same bytes (shared replicas), and with the same parent length
  // they make the same tensor: it is made once per (gathered bytes, parent) and shared.
  HeldLengths parents(global[static_cast<size_t>(d)], d, current, mesh.shape(), i);
  return map_rank_classes(
      gathered, mesh,
      [&](const std::vector<int64_t>& coord, std::vector<int64_t>& words) {
        words.push_back(parents.at(coord));
      },
      [&](int, const std::vector<int64_t>& coord, const Tensor& all) {
        const int64_t parent = parents.at(coord);
        // Pieces of the widest length lying in coordinate order (an even Shard): the gathered
        // tensor is already the parent, with no copy piece by piece.
        bool in_order = parent == shards * widest;
        for (int64_t k = 0; k < shards && in_order; ++k) {
          const Segments pieces = split(placement, parent, shards, k);
          in_order = pieces.size() == 1 && pieces[0].offset == k * widest && pieces[0].length == widest;
        }
        if (in_order) return all.transpose(0, d).contiguous();
        Shape shape = all.sizes();
        shape[0] = parent;
        Tensor out = empty(shape, beside(all));
        for (int64_t k = 0; k < shards; ++k) {
          int64_t consumed = 0;
          for (const tessera_segment& s : split(placement, parent, shards, k)) {
            out.narrow(0, s.offset, s.length).copy_(all.narrow(0, k * widest + consumed, s.length));
            consumed += s.length;
          }
        }
        return out.transpose(0, d).contiguous();
      },
      OffShapesOnly::OncePerReplica);
}

// Pads `t` with zeros up to `size` along `dim`.
Tensor pad_to(const Tensor& t, int64_t dim, int64_t size) {
  if (t.size(dim) == size) return t.contiguous();
  Shape shape = t.sizes();
  shape[static_cast<size_t>(dim)] = size;
  Tensor out = zeros(shape, beside(t));
  out.narrow(dim, 0, t.size(dim)).copy_(t);
  return out;
}

// One segment per shard, in member order (what an all_to_all can move block by block).
bool single_ordered_segments(const Placement& p, int64_t size, int64_t shards) {
  int64_t next = 0;
  for (int64_t k = 0; k < shards; ++k) {
    const Segments s = split(p, size, shards, k);
    if (s.size() != 1 || (s[0].length > 0 && s[0].offset != next)) return false;
    next += s[0].length;
  }
  return true;
}

// Mesh dim i moves its shard from tensor dim d to tensor dim e in one all_to_all: every member
// sends member k the part of its piece of d that k will hold of e, and concatenates what arrives
// along d. Only for layouts of one ordered segment per shard, with no other mesh dim on d or e.
Tensor move_shard(const Tensor& local, const DeviceMesh& mesh, const Shape& global, const Placement& from,
                  const Placement& to, size_t i) {
  const int64_t d = from.dim(), e = to.dim();
  const int64_t shards = mesh.size(static_cast<int64_t>(i));
  std::vector<Segments> piece_d, piece_e;
  int64_t widest_d = 0, widest_e = 0;
  for (int64_t k = 0; k < shards; ++k) {
    piece_d.push_back(split(from, global[static_cast<size_t>(d)], shards, k));
    piece_e.push_back(split(to, global[static_cast<size_t>(e)], shards, k));
    widest_d = std::max(widest_d, piece_d.back()[0].length);
    widest_e = std::max(widest_e, piece_e.back()[0].length);
  }
  std::vector<Tensor> inputs, outputs;
  for (int64_t k = 0; k < shards; ++k) {
    inputs.push_back(
        map_rank_classes(local, mesh, nullptr, [&](int, const std::vector<int64_t>&, const Tensor& shard) {
          const tessera_segment part = piece_e[static_cast<size_t>(k)][0];
          return pad_to(pad_to(shard.narrow(e, part.offset, part.length), e, widest_e), d, widest_d);
        }));
    outputs.push_back(map_rank_classes(
        inputs.back(), mesh, nullptr,
        [](int, const std::vector<int64_t>&, const Tensor& t) { return empty(t.sizes(), beside(t)); }));
  }
  {
    const comm::LabelScope along(mesh_dim_label(mesh, i));
    dist::all_to_all(outputs, inputs, mesh.group(static_cast<int64_t>(i)));
  }
  return map_ranks(local, mesh, [&](int rank, const std::vector<int64_t>& coord, const Tensor&) {
    std::vector<Tensor> parts;
    for (int64_t j = 0; j < shards; ++j)
      parts.push_back(outputs[static_cast<size_t>(j)]
                          .shard(rank)
                          .narrow(d, 0, piece_d[static_cast<size_t>(j)][0].length)
                          .narrow(e, 0, piece_e[static_cast<size_t>(coord[i])][0].length));
    return cat(parts, d);
  });
}

// Mesh dim i goes from a pending reduction straight to Shard(d) with one reduce_scatter: every
// member lays its terms out as the shards' blocks (padded to the widest) and receives its own
// block reduced. Only for one ordered segment per shard, with no other mesh dim on d.
Tensor reduce_scatter_shard(const Tensor& local, const DeviceMesh& mesh, const Shape& global,
                            const Placement& from, const Placement& to, size_t i) {
  const int64_t d = to.dim();
  const int64_t shards = mesh.size(static_cast<int64_t>(i));
  std::vector<Segments> pieces;
  int64_t widest = 0;
  for (int64_t k = 0; k < shards; ++k) {
    pieces.push_back(split(to, global[static_cast<size_t>(d)], shards, k));
    widest = std::max(widest, pieces.back()[0].length);
  }
  const Tensor blocks =
      map_rank_classes(local, mesh, nullptr, [&](int, const std::vector<int64_t>&, const Tensor& shard) {
        std::vector<Tensor> padded;
        for (const Segments& piece : pieces)
          padded.push_back(
              pad_to(shard.narrow(d, piece[0].offset, piece[0].length), d, widest).transpose(0, d));
        return cat(padded, 0).contiguous();
      });
  Tensor reduced =
      map_rank_classes(blocks, mesh, nullptr, [&](int, const std::vector<int64_t>&, const Tensor& all) {
        Shape shape = all.sizes();
        shape[0] = widest;
        return empty(shape, beside(all));
      });
  {
    const comm::LabelScope along(mesh_dim_label(mesh, i));
    dist::reduce_scatter_tensor(reduced, blocks, reduce_op_of(from), mesh.group(static_cast<int64_t>(i)));
  }
  const auto length_at = [&](const std::vector<int64_t>& coord) {
    return pieces[static_cast<size_t>(coord[i])][0].length;
  };
  return map_rank_classes(
      reduced, mesh,
      [&](const std::vector<int64_t>& coord, std::vector<int64_t>& words) {
        words.push_back(length_at(coord));
      },
      [&](int, const std::vector<int64_t>& coord, const Tensor& block) {
        return block.narrow(0, 0, length_at(coord)).transpose(0, d).contiguous();
      });
}

// Mesh dim i, currently Replicate, becomes `target` (a shard: a local slice; a partial: the
// value split so that the pending reduction gives it back).
Tensor replace_replicate(const Tensor& local, const DeviceMesh& mesh, const Shape& global,
                         const Placements& current, size_t i, const Placement& target) {
  const int64_t shards = mesh.size(static_cast<int64_t>(i));
  if (target.is_shard()) {
    const int64_t d = target.dim();
    HeldLengths parents(global[static_cast<size_t>(d)], d, current, mesh.shape(), i);
    return map_rank_classes(
        local, mesh,
        [&](const std::vector<int64_t>& coord, std::vector<int64_t>& words) {
          words.insert(words.end(), {parents.at(coord), coord[i]});
        },
        [&](int, const std::vector<int64_t>& coord, const Tensor& shard) {
          const int64_t parent = parents.at(coord);
          return take(shard, d, (*split_all(target, parent, shards))[static_cast<size_t>(coord[i])])
              .contiguous();
        });
  }
  const std::string& op = target.reduce_op();
  if (op == "avg" || op == "min" || op == "max" || op == "band" || op == "bor") return local;
  if (op != "sum")
    throw Error(
        fmt::format("redistribute: a replicated tensor cannot be made {} (no exact split for that op)",
                    target.to_string()));
  // Floats: every member holds value / n (as PyTorch). Integers: group rank 0 holds it, the others
  // zero, which sums back exactly.
  return map_rank_classes(
      local, mesh,
      [&](const std::vector<int64_t>& coord, std::vector<int64_t>& words) { words.push_back(coord[i] == 0); },
      [&](int, const std::vector<int64_t>& coord, const Tensor& shard) {
        if (is_floating(shard.dtype())) return shard / shards;
        return coord[i] == 0 ? shard.clone() : zeros_like(shard);
      });
}

}  // namespace

namespace {

// The pieces of `shard` along dim d, each padded with zeros to `widest`, as views of one buffer,
// one piece after another in member order: dist::scatter then hands the root's pieces to the
// collective where they lie instead of copying them into one buffer first.
std::vector<Tensor> cut_pieces(const Tensor& shard, int64_t d, const std::vector<Segments>& pieces,
                               int64_t widest) {
  Shape shape = shard.sizes();
  shape[static_cast<size_t>(d)] = widest;
  shape.insert(shape.begin(), static_cast<int64_t>(pieces.size()));
  const Tensor joined = empty(shape, beside(shard));
  std::vector<Tensor> out;
  for (size_t k = 0; k < pieces.size(); ++k) {
    Tensor slot = joined.select(0, static_cast<int64_t>(k));
    const Tensor part = take(shard, d, pieces[k]);
    const int64_t length = part.size(d);
    slot.narrow(d, 0, length).copy_(part);
    if (length < widest) slot.narrow(d, length, widest - length).fill_(0);
    out.push_back(std::move(slot));
  }
  return out;
}

}  // namespace

Tensor scatter_shard(const Tensor& local, const DeviceMesh& mesh, const Shape& global,
                     const Placements& current, size_t i, const Placement& target) {
  const int64_t d = target.dim();
  const int64_t shards = mesh.size(static_cast<int64_t>(i));
  // Every piece of every coordinate: the parent lengths that occur, each split into its pieces.
  HeldLengths parents(global[static_cast<size_t>(d)], d, current, mesh.shape(), i);
  auto pieces_at = [&](const std::vector<int64_t>& coord) {
    return split_all(target, parents.at(coord), shards);
  };
  int64_t widest = 0;
  for (const int64_t parent : parents.distinct())
    for (const Segments& piece : *split_all(target, parent, shards))
      widest = std::max(widest, total_length(piece));
  // One pass over the ranks (a large mesh has thousands) fills every piece's input. Only group
  // rank 0's pieces are scattered: the others pass space of the right shape, uninitialised and
  // never read, one per shape rather than a copy of their shard.
  // Roots whose shards are replicas of one tensor (a replicated or randn-made tensor) cut the same
  // pieces from it: each piece is cut once, per (shard bytes and layout, piece), and the other roots
  // get replicas, which dist::scatter recognises and scatters once.
  detail::MadeOnce<std::vector<Tensor>> cut;
  std::map<Shape, Tensor> unread;
  std::vector<std::vector<std::pair<int, Tensor>>> per_piece(static_cast<size_t>(shards));
  {
    DisabledLocalMode plain;
    for (const auto& [rank, shard] : local.shards()) {
      const std::vector<int64_t> coord = mesh.coordinate_of(rank);
      if (coord[i] != 0) {
        Shape space = shard.sizes();
        space[static_cast<size_t>(d)] = widest;
        auto [it, fresh] = unread.try_emplace(space);
        if (fresh) it->second = empty(space, beside(shard));
        for (auto& pieces : per_piece) pieces.emplace_back(rank, it->second);
        continue;
      }
      const auto pieces = pieces_at(coord);
      std::vector<int64_t> where;
      for (const Segments& piece : *pieces) {
        for (const tessera_segment& segment : piece)
          where.insert(where.end(), {segment.offset, segment.length});
        where.push_back(-1);  // ends a piece
      }
      const Tensor& source = shard;  // a lambda may not capture a structured binding (clang 14)
      const std::vector<Tensor> inputs = cut.get(shard_key(local, rank, std::move(where)),
                                                 [&] { return cut_pieces(source, d, *pieces, widest); });
      for (int64_t k = 0; k < shards; ++k)
        per_piece[static_cast<size_t>(k)].emplace_back(rank, inputs[static_cast<size_t>(k)]);
    }
  }
  std::vector<Tensor> inputs;
  for (auto& pieces : per_piece) inputs.push_back(local_tensor(RankMap<Tensor>(std::move(pieces))));
  Tensor received = map_rank_classes(
      inputs.front(), mesh, nullptr,
      [](int, const std::vector<int64_t>&, const Tensor& t) { return empty(t.sizes(), beside(t)); });
  {
    const comm::LabelScope along(mesh_dim_label(mesh, i), "distribute_tensor");
    dist::scatter(received, inputs, 0, mesh.group(static_cast<int64_t>(i)));
  }
  // Padding comes off once per received buffer too: ranks that share a piece share its unpadded copy.
  // On a shapes-only backend a class of ranks (alike pieces, one length) trims once.
  detail::MadeOnce unpadded;
  const auto length_at = [&](const std::vector<int64_t>& coord) {
    return total_length((*pieces_at(coord))[static_cast<size_t>(coord[i])]);
  };
  return map_rank_classes(
      received, mesh,
      [&](const std::vector<int64_t>& coord, std::vector<int64_t>& words) {
        words.push_back(length_at(coord));
      },
      [&](int rank, const std::vector<int64_t>& coord, const Tensor& piece) {
        const int64_t length = length_at(coord);
        if (length == widest) return piece;
        return unpadded.get(shard_key(received, rank, {length}),
                            [&] { return piece.narrow(d, 0, length).contiguous(); });
      });
}

Tensor map_ranks(
    const Tensor& local, const DeviceMesh& mesh,
    const std::function<Tensor(int rank, const std::vector<int64_t>& coord, const Tensor& shard)>& f) {
  std::vector<std::pair<int, Tensor>> shards;
  DisabledLocalMode plain;
  for (const auto& [rank, shard] : local.shards())
    shards.emplace_back(rank, f(rank, mesh.coordinate_of(rank), shard));
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}

Tensor map_rank_classes(const Tensor& local, const DeviceMesh& mesh, const ClassKey& key, const RankFn& f,
                        OffShapesOnly off_shapes_only) {
  const TensorImpl& first = *local.shards().begin()->second.impl();
  const bool shapes_only = first.backend().shapes_only() && !detail::memory_watched();
  if (!shapes_only && off_shapes_only == OffShapesOnly::EachRank) return map_ranks(local, mesh, f);
  std::vector<std::pair<int, Tensor>> shards;
  shards.reserve(local.shards().size());
  DisabledLocalMode plain;
  detail::MadeOnce made;
  std::vector<int64_t> words, last_words;
  const TensorImpl* last_shard = nullptr;
  Tensor last;
  for (const auto& entry : local.shards()) {
    // Named copies rather than structured bindings: the lambda below captures them, which clang 14
    // refuses for bindings.
    const int rank = entry.first;
    const Tensor& shard = entry.second;
    std::vector<int64_t> coord;
    words.clear();
    if (key) {
      coord = mesh.coordinate_of(rank);
      key(coord, words);
    }
    // Shapes only: the ranks of a class usually hold one shard object (LocalTensorImpl) and come
    // one after another, so a pointer and a few words decide, and the result itself is shared
    // (replica_of gives it back unchanged there).
    if (shapes_only && shard.impl().get() == last_shard && words == last_words) {
      shards.emplace_back(rank, last);
      continue;
    }
    last = made.get(shard_key(local, rank, words), [&] {
      if (!key) coord = mesh.coordinate_of(rank);
      return f(rank, coord, shard);
    });
    last_shard = shard.impl().get();
    last_words = words;
    shards.emplace_back(rank, last);
  }
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}

Tensor redistribute_local(const DTensor& from, const Placements& to, bool allow_partial_targets) {
  const DeviceMesh& mesh = from.device_mesh();
  const Placements target = bind(to, mesh.ndim(), from.dim(), "redistribute");
  Placements current = from.placements();
  const size_t n = current.size();
  for (size_t i = 0; i < n; ++i) {
    if (target[i].is_partial() && current[i] != target[i]) {
      if (current[i].is_partial())
        throw Error(
            fmt::format("redistribute: {} -> {} on mesh dim {} is not supported (a pending reduction cannot "
                        "change its op)",
                        current[i].to_string(), target[i].to_string(), i));
      if (current[i].is_shard())
        throw Error(
            fmt::format("redistribute: {} -> {} on mesh dim {} is not supported (a shard cannot become a "
                        "partial)",
                        current[i].to_string(), target[i].to_string(), i));
      if (!allow_partial_targets)
        throw Error(
            fmt::format("redistribute: Replicate -> {} on mesh dim {} is internal only; request Shard or "
                        "Replicate",
                        target[i].to_string(), i));
    }
  }
  // On a mesh dim of one rank every layout holds the same bytes (the one shard is the whole, the
  // one pending term is the sum): relabel, communicate nothing.
  for (size_t i = 0; i < n; ++i)
    if (mesh.size(static_cast<int64_t>(i)) == 1) current[i] = target[i];
  Tensor local = from.to_local();
  const Shape& global = from.shape();

  // Whether mesh dim i alone touches tensor dims d and e (in both layouts).
  auto alone_on = [&](size_t i, int64_t d, int64_t e) {
    for (size_t j = 0; j < n; ++j)
      if (j != i && (current[j].is_shard(d) || current[j].is_shard(e) || target[j].is_shard(d) ||
                     target[j].is_shard(e)))
        return false;
    return true;
  };
  // 1. Pending reductions that do not stay pending: straight into a shard with one reduce_scatter
  //    where nothing else shards that dim, else all_reduce (and slice later).
  for (size_t i = 0; i < n; ++i)
    if (current[i].is_partial() && target[i].is_shard()) {
      const int64_t d = target[i].dim();
      if (!alone_on(i, d, d) || !single_ordered_segments(target[i], global[static_cast<size_t>(d)],
                                                         mesh.size(static_cast<int64_t>(i))))
        continue;
      local = reduce_scatter_shard(local, mesh, global, current[i], target[i], i);
      current[i] = target[i];
    }
  for (size_t i = 0; i < n; ++i)
    if (current[i].is_partial() && current[i] != target[i]) {
      local = local.clone();
      const comm::LabelScope along(mesh_dim_label(mesh, i));
      dist::all_reduce(local, reduce_op_of(current[i]), mesh.group(static_cast<int64_t>(i)));
      current[i] = Replicate();
    }
  // 2. A shard that only moves to another tensor dim, touching no dim another mesh dim shards:
  //    one all_to_all.
  for (size_t i = 0; i < n; ++i) {
    if (!current[i].is_shard() || !target[i].is_shard() || current[i].dim() == target[i].dim()) continue;
    const int64_t d = current[i].dim(), e = target[i].dim();
    const int64_t shards = mesh.size(static_cast<int64_t>(i));
    if (!alone_on(i, d, e) || !single_ordered_segments(current[i], global[static_cast<size_t>(d)], shards) ||
        !single_ordered_segments(target[i], global[static_cast<size_t>(e)], shards))
      continue;
    local = move_shard(local, mesh, global, current[i], target[i], i);
    current[i] = target[i];
  }
  // 3. Unshard, right to left: a shard that changes, or nests inside a mesh dim that changes.
  for (size_t i = n; i-- > 0;) {
    if (!current[i].is_shard()) continue;
    const int64_t d = current[i].dim();
    bool changes = current[i] != target[i];
    for (size_t j = 0; j < i && !changes; ++j)
      changes = (current[j].is_shard(d) || target[j].is_shard(d)) && current[j] != target[j];
    if (!changes) continue;
    local = unshard(local, mesh, global, current, i);
    current[i] = Replicate();
  }
  // 4. Shard or make partial, left to right.
  for (size_t i = 0; i < n; ++i) {
    if (current[i] == target[i]) continue;
    local = replace_replicate(local, mesh, global, current, i, target[i]);
    current[i] = target[i];
  }
  return local;
}

}  // namespace tessera::dtensor
