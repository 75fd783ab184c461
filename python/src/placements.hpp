// Placements between Python and C++, shared by the placement, mesh and DTensor bindings.
#pragma once

#include "bindings.hpp"

namespace tessera::python {

// Placements as users give them: any sequence (tuple, list, ...) of ts.Placement objects or
// placement strings ("S(0)", "Shard(dim=0)", "R"), or one string of them all ("S(0),R").
Placements placements_from(nb::handle placements, const char* what);
// One placement as the Python class of its kind (ts.Shard, ts.BalancedShard, ts.Replicate,
// ts.Partial), so that isinstance(p, ts.Shard) works as in PyTorch.
nb::object to_python(const Placement& placement);
// A tuple, as PyTorch's dt.placements.
nb::tuple to_python(const Placements& placements);

}  // namespace tessera::python
