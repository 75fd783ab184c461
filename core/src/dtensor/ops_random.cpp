// Random DTensors and dropout on DTensors: the numbers are those of the same op on the full tensor
// (rand()'s counter at offset + global row-major index), whatever the placements: the full tensor's
// numbers are drawn once, as every rank would draw them, and each rank keeps its part (Replicate:
// all of it; Shard: its slice at its global offsets, uneven shards included). The generator
// advances by the global element count, the same on every rank. Each rank touches the full
// tensor's numbers once (in a simulated world one buffer that the ranks share).
#include <fmt/format.h>

#include "dispatch/backends.hpp"
#include "dtensor/ops_common.hpp"
#include "dtensor/random_mask.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"

namespace tessera {
namespace {

// The generator state every rank draws from must be one: inside a LocalMode whose ranks were
// seeded apart, the "full tensor" would differ per rank.
void require_alike_generators(const char* op) {
  LocalMode* mode = active_local_mode();
  if (mode == nullptr) return;
  const RankSet& ranks = mode->ranks();
  const Generator& first = mode->generator(ranks[0]);
  for (int r : ranks) {
    const Generator& g = mode->generator(r);
    if (g.seed() != first.seed() || g.offset() != first.offset())
      throw Error(
          fmt::format("{} on DTensors: rank {}'s generator (seed {}, offset {}) differs from rank {}'s (seed "
                      "{}, offset {}); expected one generator state on every rank (seed them alike, as "
                      "PyTorch requires for DTensor random ops)",
                      op, r, g.seed(), g.offset(), ranks[0], first.seed(), first.offset()));
  }
}

// `draw`'s full tensor as one plain tensor (inside a LocalMode the ranks drew the same numbers).
template <class Draw>
Tensor full_numbers(const char* op, Draw&& draw) {
  require_alike_generators(op);
  const Tensor drawn = draw();
  return drawn.is_local() ? drawn.shard(drawn.ranks()[0]) : drawn;
}

Placements without_partial(const Placements& placements) {
  Placements out = placements;
  for (Placement& p : out)
    if (p.is_partial()) p = Replicate();
  return out;
}

// The plain tensor `full`, held whole by every rank, laid out as `placements` (no communication:
// Replicate to Shard is a local slice).
DTensor laid_out(const Tensor& full, const DeviceMesh& mesh, const Placements& placements, const char* op) {
  for (const Placement& p : placements)
    if (p.is_partial())
      throw Error(fmt::format(
          "{}: {} is not allowed for new random values (a pending reduction has no source value); "
          "use Shard or Replicate",
          op, p.to_string()));
  return from_local(full, mesh, dtensor::all_replicate(mesh)).redistribute(placements);
}

DTensor dropout_with(const DTensor& x, double p, bool training, Generator* generator) {
  if (!(p >= 0.0 && p <= 1.0))
    throw Error(fmt::format("dropout: p is {}, expected a probability in [0, 1]", p));
  if (!is_floating(x.dtype()))
    throw Error(
        fmt::format("dropout: input has dtype {}, expected float32 or float64", dtype_name(x.dtype())));
  if (!training || p == 0.0) return x;
  if (p == 1.0) return mul(x, 0.0);
  const DTensor mask = dtensor::dropout_mask(x.shape(), x.device_mesh(), without_partial(x.placements()),
                                             x.dtype(), x.to_local().backend(), p, generator);
  // The mask is laid out as x (a Partial mesh dim takes the whole mask: scaling each term scales
  // the sum), so each rank multiplies its own part: no redistribution, whatever the costs say.
  return DTensor(x.to_local() * mask.to_local(), x.device_mesh(), x.placements(), x.shape());
}

// Options naming no backend draw on the one the mesh's device type names (as distribute_tensor
// moves tensors there), when it names one: a meta mesh's numbers are shapes only.
TensorOptions on_mesh(TensorOptions options, const DeviceMesh& mesh) {
  if (!options.backend_name.empty()) return options;
  try {
    return options.backend(dispatch::backend(mesh.device_type())->name());
  } catch (const Error&) {
    return options;  // a device type that is a label only ("cuda" without a CUDA backend)
  }
}

}  // namespace

namespace dtensor {
DTensor dropout_mask(const Shape& shape, const DeviceMesh& mesh, const Placements& placements, DType dtype,
                     const std::string& backend, double p, Generator* generator) {
  const TensorOptions options = TensorOptions(dtype).backend(backend);
  const Tensor uniform = full_numbers(
      "dropout", [&] { return generator ? rand(shape, *generator, options) : rand(shape, options); });
  // The mask of the dense dropout (dropout.cpp): kept where the number is below 1 - p.
  const Tensor mask = p == 1.0 ? uniform * 0.0 : lt(uniform, Scalar(1.0 - p)).to(dtype) * (1.0 / (1.0 - p));
  return laid_out(mask, mesh, placements, "dropout");
}
}  // namespace dtensor

DTensor rand(const Shape& shape, const DeviceMesh& mesh, const Placements& placements,
             TensorOptions options) {
  options = on_mesh(options, mesh);
  return laid_out(full_numbers("rand", [&] { return rand(shape, options); }), mesh, placements, "rand");
}
DTensor randn(const Shape& shape, const DeviceMesh& mesh, const Placements& placements,
              TensorOptions options) {
  options = on_mesh(options, mesh);
  return laid_out(full_numbers("randn", [&] { return randn(shape, options); }), mesh, placements, "randn");
}
DTensor rand(const Shape& shape, const DeviceMesh& mesh, const Placements& placements, Generator& generator,
             TensorOptions options) {
  options = on_mesh(options, mesh);
  return laid_out(full_numbers("rand", [&] { return rand(shape, generator, options); }), mesh, placements,
                  "rand");
}
DTensor randn(const Shape& shape, const DeviceMesh& mesh, const Placements& placements, Generator& generator,
              TensorOptions options) {
  options = on_mesh(options, mesh);
  return laid_out(full_numbers("randn", [&] { return randn(shape, generator, options); }), mesh, placements,
                  "randn");
}

DTensor dropout(const DTensor& x, double p, bool training) { return dropout_with(x, p, training, nullptr); }
DTensor dropout(const DTensor& x, double p, bool training, Generator& generator) {
  return dropout_with(x, p, training, &generator);
}

}  // namespace tessera
