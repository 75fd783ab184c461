// cat and stack of DTensors. Every input must end up placed alike on each mesh dim: all Replicate,
// all sharding the same (kept) tensor dim, or all the same linear Partial (joining is linear, so
// the terms join). A shard of cat's joined dim cannot be kept: the pieces of the inputs would
// interleave, so such mesh dims are redistributed first, the cheapest way.
#include <fmt/format.h>

#include "dtensor/ops_common.hpp"
#include "tensor/checked_arith.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

// The joined global shape; an error naming the first input whose shape does not fit.
Shape joined_shape(const char* op, const std::vector<DTensor>& tensors, int64_t d, bool stacking) {
  const Shape& first = tensors.front().shape();
  Shape out = first;
  if (stacking)
    out.insert(out.begin() + d, 0);
  else
    out[static_cast<size_t>(d)] = 0;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Shape& shape = tensors[k].shape();
    bool fits = shape.size() == first.size();
    for (size_t e = 0; fits && e < shape.size(); ++e)
      fits = shape[e] == first[e] || (!stacking && static_cast<int64_t>(e) == d);
    if (!fits)
      throw Error(
          fmt::format("{}: DTensor {} has shape {} but DTensor 0 has shape {}; {}", op, k, shape_text(shape),
                      shape_text(first),
                      stacking ? "stack needs equal shapes"
                               : fmt::format("cat needs the same number of dims and equal sizes in every dim "
                                             "but dim {}",
                                             d)));
    const int64_t added = stacking ? 1 : shape[static_cast<size_t>(d)];
    out[static_cast<size_t>(d)] = detail::checked_add(out[static_cast<size_t>(d)], added,
                                                      [&] { return fmt::format("{} along dim {}", op, d); });
  }
  return out;
}

DTensor join(const char* op, const std::vector<DTensor>& tensors, int64_t dim, bool stacking) {
  if (tensors.empty()) throw Error(fmt::format("{}: expects at least one DTensor, got none", op));
  const DTensor& first = tensors.front();
  if (!stacking && first.dim() == 0)
    throw Error(
        fmt::format("{}: DTensor 0 is 0-d; a 0-d tensor has no dim to join along (stack it instead)", op));
  const int64_t d = normalize_dim(dim, stacking ? first.dim() + 1 : first.dim(), op);
  const Shape out = joined_shape(op, tensors, d, stacking);
  const size_t n = tensors.size();
  const dtensor::Prepared plan = dtensor::prepare(op, tensors, [&](size_t i) {
    Placement like = first.placements()[i];
    for (const DTensor& t : tensors)
      if (t.placements()[i].is_shard()) like = t.placements()[i];
    std::vector<Strategy> s = {{Placements(n, Replicate()), Replicate()}};
    for (int64_t e = 0; e < first.dim(); ++e) {
      if (!stacking && e == d) continue;
      const int64_t landed = stacking && e >= d ? e + 1 : e;  // stack's new dim shifts the dims after it
      s.push_back({Placements(n, dtensor::shard_like(like, e)), dtensor::shard_like(like, landed)});
    }
    for (const DTensor& t : tensors)
      if (dtensor::linear_partial(t.placements()[i])) {
        s.push_back({Placements(n, t.placements()[i]), t.placements()[i]});
        break;
      }
    return s;
  });
  std::vector<Tensor> locals;
  for (const DTensor& t : plan.inputs) locals.push_back(t.to_local());
  return plan.result(stacking ? stack(locals, d) : cat(locals, d), out);
}

}  // namespace

DTensor cat(const std::vector<DTensor>& tensors, int64_t dim) { return join("cat", tensors, dim, false); }
DTensor stack(const std::vector<DTensor>& tensors, int64_t dim) { return join("stack", tensors, dim, true); }

}  // namespace tessera
