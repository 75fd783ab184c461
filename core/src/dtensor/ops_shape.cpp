// transpose / permute / reshape / view on DTensors: shard dims move with their data; no
// communication unless a reshape splits a sharded dim in a way the layout cannot follow.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "dtensor/ops_common.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

// Groups of input dims and output dims with equal products, in order (as a reshape pairs them).
struct DimGroup {
  std::vector<int64_t> in;
  std::vector<int64_t> out;
};

std::vector<DimGroup> dim_groups(const Shape& in, const Shape& out) {
  std::vector<DimGroup> groups;
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    DimGroup g;
    int64_t pin = 1, pout = 1;
    if (i < in.size()) pin = in[i], g.in.push_back(static_cast<int64_t>(i++));
    if (o < out.size()) pout = out[o], g.out.push_back(static_cast<int64_t>(o++));
    while (pin != pout) {
      if (pin < pout && i < in.size()) pin *= in[i], g.in.push_back(static_cast<int64_t>(i++));
      else if (pout < pin && o < out.size()) pout *= out[o], g.out.push_back(static_cast<int64_t>(o++));
      else break;
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

// Where shard dim d of `in` lands in `out`, when a shard can follow the reshape without moving.
std::optional<int64_t> follow(const Shape& in, const Shape& out, int64_t d, int64_t shards) {
  for (const DimGroup& g : dim_groups(in, out)) {
    if (std::find(g.in.begin(), g.in.end(), d) == g.in.end()) continue;
    if (g.in.size() == 1 && g.out.size() == 1) return g.out[0];  // the dim survives whole
    if (g.in.front() != d || in[static_cast<size_t>(d)] % shards != 0) return std::nullopt;
    // Leading dim of a merge, or a split whose leading output dim still divides evenly.
    if (g.out.size() == 1) return g.out[0];
    if (g.in.size() == 1 && out[static_cast<size_t>(g.out[0])] % shards == 0) return g.out[0];
    return std::nullopt;
  }
  return std::nullopt;
}

DTensor reshaped(const char* op, const DTensor& a, const Shape& requested, bool may_move) {
  // Resolve -1 with the global element count.
  Shape shape = requested;
  int64_t known = 1, infer = -1, total = 1;
  for (int64_t s : a.shape()) total *= s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) infer = static_cast<int64_t>(i);
    else known *= shape[i];
  }
  if (infer >= 0 && known != 0) shape[static_cast<size_t>(infer)] = total / known;
  int64_t product = 1;
  for (int64_t s : shape) product *= s;
  if (product != total)
    throw Error(fmt::format("{}: shape {} is invalid for a DTensor of {} elements", op, shape_text(requested), total));

  const dtensor::Prepared plan = dtensor::prepare(op, {a}, [&](size_t i) {
    const Placement& p = a.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if (p.is_partial()) s.push_back({{p}, p});
    if (p.is_shard()) {
      if (auto o = follow(a.shape(), shape, p.dim(), a.device_mesh().size(static_cast<int64_t>(i)))) {
        s.push_back({{p}, dtensor::shard_like(p, *o)});
      } else if (!may_move) {
        throw Error(fmt::format("{}: shard {} of a {} DTensor cannot follow the view to {} without moving data; use "
                                "reshape",
                                op, p.to_string(), shape_text(a.shape()), shape_text(shape)));
      }
    }
    return s;
  });
  // Each rank reshapes its own shard. A sharded output dim o that follows input dim d holds
  // out[o] * (local d / in[d]) elements: the same fraction of it as the shard holds of d.
  const DTensor& input = plan.inputs[0];
  const DeviceMesh& mesh = a.device_mesh();
  std::vector<std::pair<int64_t, int64_t>> followed;  // (input dim, output dim)
  for (size_t i = 0; i < plan.output.size(); ++i)
    if (plan.output[i].is_shard()) followed.emplace_back(input.placements()[i].dim(), plan.output[i].dim());
  std::vector<std::pair<int, Tensor>> shards;
  for (const auto& [rank, shard] : input.to_local().shards()) {
    Shape local = shape;
    for (const auto& [d, o] : followed) {
      const int64_t whole = a.shape()[static_cast<size_t>(d)];
      local[static_cast<size_t>(o)] = whole == 0 ? 0 : shape[static_cast<size_t>(o)] * shard.size(d) / whole;
    }
    shards.emplace_back(rank, shard.reshape(local));
  }
  return DTensor(local_tensor(RankMap<Tensor>(std::move(shards))), mesh, plan.output, shape);
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
  for (const Placement& p : a.placements()) out.push_back(p.is_shard() ? p.with_dim(where[static_cast<size_t>(p.dim())]) : p);
  return DTensor(a.to_local().permute(dims), a.device_mesh(), out, shape);
}

DTensor reshape(const DTensor& a, const Shape& shape) { return reshaped("reshape", a, shape, true); }
DTensor view(const DTensor& a, const Shape& shape) { return reshaped("view", a, shape, false); }

}  // namespace tessera
