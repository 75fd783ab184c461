// Shared by the DTensor op files: running a local op under a prepared plan.
#pragma once

#include <algorithm>
#include <vector>

#include "autograd/node.hpp"
#include "dtensor/grad_layout.hpp"
#include "dtensor/propagation.hpp"
#include "tessera/dtensor_ops.hpp"
#include "tessera/ops.hpp"

namespace tessera::dtensor {

// Placements that are Replicate on every mesh dim of `mesh`.
inline Placements all_replicate(const DeviceMesh& mesh) {
  return Placements(static_cast<size_t>(mesh.ndim()), Replicate());
}

// True for partial placements whose pending reduction is linear (sum, avg): ops that are linear in
// their input may run on the terms.
inline bool linear_partial(const Placement& p) {
  return p.is_partial() && (p.reduce_op() == "sum" || p.reduce_op() == "avg");
}

// `strategies` with those the inputs already match (placements `current`, one per input) first:
// prepare keeps the first of equally cheap strategies, and on a mesh dim of one rank every
// redistribution costs nothing, so this keeps what needs no change at all.
inline std::vector<Strategy> matching_first(std::vector<Strategy> strategies, const Placements& current) {
  std::stable_partition(strategies.begin(), strategies.end(),
                        [&](const Strategy& s) { return s.inputs == current; });
  return strategies;
}

}  // namespace tessera::dtensor
