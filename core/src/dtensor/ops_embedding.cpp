// embedding on DTensors. Per mesh dim:
//   indices R, weight R      -> R
//   indices R, weight S(0)   -> P(sum): vocabulary parallel. Each rank looks up only the indices
//                               in its row range (shifted to local rows) and gives zero rows for
//                               the others, so the sum over the mesh dim is the lookup; no
//                               communication in forward.
//   indices R, weight S(1)   -> S(last): each rank holds some columns of every row.
//   indices S(d), weight R   -> S(d): a batch / sequence shard looks up its own indices.
// Partial indices (not linear in anything) are reduced first.
#include <fmt/format.h>

#include "dtensor/held_range.hpp"
#include "dtensor/ops_common.hpp"
#include "tensor/tensor_impl.hpp"
#include "tensor/index_check.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

// The masked lookup of a weight sharded on its rows: rows this rank does not hold read as zero.
Tensor masked_lookup(const Tensor& indices, const DTensor& weight) {
  const dtensor::HeldRange range = dtensor::held_range(weight, 0, "embedding");
  const Tensor& w = weight.to_local();
  const Tensor shifted = indices.to(kInt64) - range.start;
  const Tensor owned = ge(shifted, 0) * lt(shifted, range.length);
  const Tensor owned_int = owned.to(kInt64);
  if (!range.some_empty) return embedding(shifted * owned_int, w) * owned.to(w.dtype()).unsqueeze(-1);
  // Some rank holds no rows (fewer rows than ranks): every rank appends one zero row and points
  // the indices it does not hold at it.
  Tensor zero_row;
  {
    DisabledLocalMode plain;
    zero_row = zeros({1, weight.shape()[1]}, TensorOptions(w.dtype()).backend(w.backend()));
  }
  return embedding(shifted * owned_int + (1 - owned_int) * range.length, cat({w, zero_row}, 0));
}

}  // namespace

DTensor embedding(const DTensor& indices, const DTensor& weight) {
  if (weight.dim() != 2)
    throw Error(
        fmt::format("embedding: weight has shape {}, expected 2 dims (vocabulary size, embedding dim)",
                    shape_text(weight.shape())));
  if (indices.dtype() != kInt64 && indices.dtype() != kInt32)
    throw Error(fmt::format("embedding: indices have dtype {}, expected int64 or int32",
                            dtype_name(indices.dtype())));
  const int64_t index_ndim = indices.dim();
  const dtensor::Prepared plan = dtensor::prepare("embedding", {indices, weight}, [&](size_t i) {
    const Placement& pi = indices.placements()[i];
    const Placement& pw = weight.placements()[i];
    std::vector<Strategy> s = {
        {{Replicate(), dtensor::shard_like(pw, 0)}, Partial("sum")},
        {{Replicate(), dtensor::shard_like(pw, 1)}, dtensor::shard_like(pw, index_ndim)},
    };
    for (int64_t d = 0; d < index_ndim; ++d)
      s.push_back({{dtensor::shard_like(pi, d), Replicate()}, dtensor::shard_like(pi, d)});
    s.push_back({{Replicate(), Replicate()}, Replicate()});
    return dtensor::matching_first(std::move(s), {pi, pw});
  });
  const DTensor& idx = plan.inputs[0];
  const DTensor& w = plan.inputs[1];
  bool vocabulary_parallel = false;
  for (const Placement& p : w.placements()) vocabulary_parallel = vocabulary_parallel || p.is_shard(0);
  Tensor local;
  if (vocabulary_parallel) {
    detail::check_embedding_indices(idx.to_local(), weight.shape()[0], "embedding");
    local = masked_lookup(idx.to_local(), w);
  } else {
    local = embedding(idx.to_local(), w.to_local());
  }
  Shape out = indices.shape();
  out.push_back(weight.shape()[1]);
  return plan.result(local, out);
}

DTensor embedding(const Tensor& indices, const DTensor& weight) {
  // A local tensor (made inside a LocalMode) is each rank's own copy of the indices.
  const DeviceMesh& mesh = weight.device_mesh();
  const Placements replicate = dtensor::all_replicate(mesh);
  return embedding(
      indices.is_local() ? from_local(indices, mesh, replicate) : distribute_tensor(indices, mesh, replicate),
      weight);
}

}  // namespace tessera
