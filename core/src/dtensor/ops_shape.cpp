// transpose / permute / reshape / view on DTensors: shard dims move with their data; no
// communication unless a reshape or view regroups a sharded dim in a way the layout cannot follow
// (then that mesh dim is gathered to Replicate first).
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "dtensor/layout.hpp"
#include "dtensor/ops_common.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

// Groups of input dims and output dims with equal products, in order (as a reshape pairs them).
// Dims of size 1 pair as PyTorch's view rule pairs them: one facing a size-1 dim of the other
// shape is an identity group of its own (so a shard on it stays where it is), one facing a larger
// dim is dropped (an input dim: no output dims) or inserted (an output dim: no input dims); a
// group that merges or splits larger dims carries the size-1 dims between them. For tensors with
// elements only (no size is 0, so products only grow).
struct DimGroup {
  std::vector<int64_t> in;
  std::vector<int64_t> out;
};

std::vector<DimGroup> dim_groups(const Shape& in, const Shape& out) {
  std::vector<DimGroup> groups;
  size_t i = 0, o = 0;
  // Partial products never exceed the element count, which exists: no overflow.
  while (i < in.size() || o < out.size()) {
    const bool in_left = i < in.size(), out_left = o < out.size();
    const bool in_one = in_left && in[i] == 1, out_one = out_left && out[o] == 1;
    DimGroup g;
    if (in_one && out_one) {
      g.in.push_back(static_cast<int64_t>(i++));
      g.out.push_back(static_cast<int64_t>(o++));
    } else if (in_one || !out_left) {  // equal products: what is left of the input is size 1
      g.in.push_back(static_cast<int64_t>(i++));
    } else if (out_one || !in_left) {
      g.out.push_back(static_cast<int64_t>(o++));
    } else {
      int64_t pin = in[i], pout = out[o];
      g.in.push_back(static_cast<int64_t>(i++));
      g.out.push_back(static_cast<int64_t>(o++));
      while (pin != pout) {
        if (pin < pout && i < in.size())
          pin *= in[i], g.in.push_back(static_cast<int64_t>(i++));
        else if (pout < pin && o < out.size())
          pout *= out[o], g.out.push_back(static_cast<int64_t>(o++));
        else
          break;
      }
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

// How input dim d lands in the output: flattened with the dims after it in its group, index j of
// d is elements [j * in_tail, (j + 1) * in_tail), which are out_tail elements per index of out_dim.
struct DimMap {
  int64_t out_dim;
  int64_t in_tail;
  int64_t out_tail;
};

int64_t product_after_first(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (size_t k = 1; k < dims.size(); ++k) p *= shape[static_cast<size_t>(dims[k])];
  return p;
}

// Only the first dim of a group can carry a shard into the output (its blocks are whole runs of
// the flattened group); a dropped dim of size 1 carries none.
std::optional<DimMap> map_dim(const std::vector<DimGroup>& groups, const Shape& in, const Shape& out,
                              int64_t d) {
  for (const DimGroup& g : groups)
    if (!g.in.empty() && !g.out.empty() && g.in.front() == d)
      return DimMap{g.out.front(), product_after_first(in, g.in), product_after_first(out, g.out)};
  return std::nullopt;
}

// Segments without empty pieces, adjacent ones joined: two layouts are the same when these match.
dtensor::Segments normalized(const dtensor::Segments& segments) {
  dtensor::Segments result;
  for (const tessera_segment& s : segments) {
    if (s.length == 0) continue;
    if (!result.empty() && result.back().offset + result.back().length == s.offset)
      result.back().length += s.length;
    else
      result.push_back(s);
  }
  return result;
}

// Whether a shard of `length` input elements along the mapped dim, split by `p` into `shards` and
// taken at `index`, is exactly what the same split gives the output dim: the input pieces,
// flattened, must be whole runs of output rows at the same places.
bool lines_up(const Placement& p, int64_t length, int64_t shards, int64_t index, const DimMap& m) {
  int64_t flat = 0;
  if (__builtin_mul_overflow(length, m.in_tail, &flat) || flat % m.out_tail != 0) return false;
  dtensor::Segments scaled;
  for (const tessera_segment& s : dtensor::split(p, length, shards, index)) {
    int64_t offset = 0, count = 0;
    if (__builtin_mul_overflow(s.offset, m.in_tail, &offset) ||
        __builtin_mul_overflow(s.length, m.in_tail, &count) || offset % m.out_tail != 0 ||
        count % m.out_tail != 0)
      return false;
    scaled.push_back({offset / m.out_tail, count / m.out_tail});
  }
  const dtensor::Segments want = normalized(dtensor::split(p, flat / m.out_tail, shards, index));
  const dtensor::Segments got = normalized(scaled);
  if (want.size() != got.size()) return false;
  for (size_t k = 0; k < want.size(); ++k)
    if (want[k].offset != got[k].offset || want[k].length != got[k].length) return false;
  return true;
}

// Per mesh dim: the output placement a shard keeps through the reshape without moving data, or
// nothing when it must be replicated first. Mesh dims sharding one tensor dim nest, so each is
// checked against the range the earlier ones leave on every rank (those that cannot follow are
// replicated, so the later ones split what is left of them).
std::vector<std::optional<Placement>> followed_placements(const DTensor& a, const Shape& out) {
  const DeviceMesh& mesh = a.device_mesh();
  const Shape& in = a.shape();
  std::vector<std::optional<Placement>> result(a.placements().size());
  int64_t total = 1;
  for (int64_t s : in) total *= s;
  if (total == 0) return result;  // nothing to keep: every layout of no elements is the same
  const std::vector<DimGroup> groups = dim_groups(in, out);
  Placements effective = a.placements();
  for (size_t i = 0; i < effective.size(); ++i) {
    const Placement& p = effective[i];
    if (!p.is_shard()) continue;
    const int64_t d = p.dim();
    const std::optional<DimMap> m = map_dim(groups, in, out, d);
    const int64_t shards = mesh.size(static_cast<int64_t>(i));
    bool follows = m.has_value();
    if (shards == 1) {
      // One shard holds all its parent holds: any placement of the output says the same.
      result[i] = m ? dtensor::shard_like(p, m->out_dim) : Replicate();
      continue;
    }
    for (int rank : mesh.ranks()) {
      if (!follows) break;
      const std::vector<int64_t> coord = mesh.coordinate_of(rank);
      const int64_t parent = dtensor::total_length(
          dtensor::held(in[static_cast<size_t>(d)], d, effective, mesh.shape(), coord, i));
      follows = lines_up(p, parent, shards, coord[i], *m);
    }
    if (follows) {
      result[i] = dtensor::shard_like(p, m->out_dim);
    } else {
      effective[i] = Replicate();
    }
  }
  return result;
}

// The requested shape with -1 resolved by the global element count; checked for overflow.
Shape resolve_shape(const char* op, const Shape& requested, int64_t total) {
  Shape shape = requested;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && !infer) {
      infer = i;
      continue;
    }
    if (shape[i] < 0)
      throw Error(
          fmt::format("{}: shape {} is invalid: size {} at dim {} (only one dim may be -1, the others >= 0)",
                      op, shape_text(requested), shape[i], i));
    if (__builtin_mul_overflow(known, shape[i], &known))
      throw Error(
          fmt::format("{}: shape {} has more elements than int64 can count", op, shape_text(requested)));
  }
  if (infer) {
    if (known == 0 || total % known != 0)
      throw Error(fmt::format("{}: shape {} is invalid for a DTensor of {} elements{}", op,
                              shape_text(requested), total, known == 0 ? " (the -1 could be any size)" : ""));
    shape[*infer] = total / known;
  } else if (known != total) {
    throw Error(fmt::format("{}: shape {} is invalid for a DTensor of {} elements", op, shape_text(requested),
                            total));
  }
  return shape;
}

DTensor reshaped(const char* op, const DTensor& a, const Shape& requested, bool is_view) {
  int64_t total = 1;
  for (int64_t s : a.shape()) total *= s;  // a's shards exist, so its element count fits
  const Shape shape = resolve_shape(op, requested, total);
  const std::vector<std::optional<Placement>> kept = followed_placements(a, shape);

  const dtensor::Prepared plan = dtensor::prepare(op, {a}, [&](size_t i) {
    const Placement& p = a.placements()[i];
    std::vector<Strategy> s;
    // Keeping the shard comes first: on a mesh dim of one rank it costs the same as replicating.
    // A shard that cannot follow is gathered first, for view as for reshape: PyTorch's view does
    // the same (its result then shares no storage with the input).
    if (kept[i]) s.push_back({{p}, *kept[i]});
    s.push_back({{Replicate()}, Replicate()});
    if (p.is_partial()) s.push_back({{p}, p});
    return s;
  });
  // Each rank reshapes its own shard; an output dim that a shard followed holds the shard's
  // elements of the input dim, flattened and regrouped (exact, checked by lines_up).
  const DTensor& input = plan.inputs[0];
  const Shape& in = a.shape();
  const std::vector<DimGroup> groups = total == 0 ? std::vector<DimGroup>{} : dim_groups(in, shape);
  std::vector<std::pair<int64_t, DimMap>> followed;  // (input dim, where it lands)
  for (size_t i = 0; i < plan.output.size(); ++i)
    if (plan.output[i].is_shard()) {
      const int64_t d = input.placements()[i].dim();
      followed.emplace_back(d, *map_dim(groups, in, shape, d));
    }
  std::vector<std::pair<int, Tensor>> shards;
  for (const auto& [rank, shard] : input.to_local().shards()) {
    Shape local = shape;
    for (const auto& [d, m] : followed)
      local[static_cast<size_t>(m.out_dim)] =
          shard.size(d) * m.in_tail / m.out_tail;  // <= the output dim: fits
    shards.emplace_back(rank, is_view ? shard.view(local) : shard.reshape(local));
  }
  Tensor out = local_tensor(RankMap<Tensor>(std::move(shards)));
  // The shards were reshaped one by one; the local tensor's graph records the reshape as a whole.
  if (autograd::any_requires_grad(input.to_local()))
    autograd::record_reshape(is_view ? "ViewBackward" : "ReshapeBackward", input.to_local(), out);
  return plan.result(out, shape);
}

}  // namespace

DTensor transpose(const DTensor& a, int64_t dim0, int64_t dim1) {
  const int64_t d0 = normalize_dim(dim0, a.dim(), "transpose");
  const int64_t d1 = normalize_dim(dim1, a.dim(), "transpose");
  std::vector<int64_t> order(static_cast<size_t>(a.dim()));
  for (int64_t d = 0; d < a.dim(); ++d) order[static_cast<size_t>(d)] = d;
  std::swap(order[static_cast<size_t>(d0)], order[static_cast<size_t>(d1)]);
  return permute(a, order);
}

DTensor permute(const DTensor& a, const std::vector<int64_t>& dims) {
  if (static_cast<int64_t>(dims.size()) != a.dim())
    throw Error(fmt::format("permute: got {} dims for a DTensor of {} dims", dims.size(), a.dim()));
  std::vector<int64_t> where(static_cast<size_t>(a.dim()));
  Shape shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = normalize_dim(dims[i], a.dim(), "permute");
    where[static_cast<size_t>(d)] = static_cast<int64_t>(i);
    shape.push_back(a.shape()[static_cast<size_t>(d)]);
  }
  Placements out;
  for (const Placement& p : a.placements())
    out.push_back(p.is_shard() ? p.with_dim(where[static_cast<size_t>(p.dim())]) : p);
  const uint64_t first_node = autograd::next_node_number();
  return dtensor::op_output(a.to_local().permute(dims), a.device_mesh(), out, shape, first_node);
}

DTensor reshape(const DTensor& a, const Shape& shape) { return reshaped("reshape", a, shape, false); }
DTensor view(const DTensor& a, const Shape& shape) { return reshaped("view", a, shape, true); }

}  // namespace tessera
