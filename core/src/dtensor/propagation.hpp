// Sharding propagation: choosing, per mesh dim, how an op runs on its inputs' placements.
//
// Every op describes its options per mesh dim as strategies: the placement each input must have
// and the output placement that gives. When the inputs already match a strategy it is used as is;
// otherwise the strategy whose redistribution is cheapest under the mesh's topology is chosen,
// and that implicit communication is logged with the op's name.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/dtensor.hpp"

namespace tessera::dtensor {

struct Strategy {
  Placements inputs;  // one per input
  Placement output;
};

using StrategiesForMeshDim = std::function<std::vector<Strategy>(size_t mesh_dim)>;

struct Prepared {
  std::vector<DTensor> inputs;  // redistributed as the chosen strategies need
  Placements output;
  uint64_t first_node = 0;  // the first autograd node the op records (see grad_layout.hpp)

  // The op's result from its local tensor: placed `output`, its backward passing gradient terms
  // through where the output is Replicate.
  DTensor result(const Tensor& local, const Shape& shape) const;
};

// Throws Error naming the op and the input placements when no strategy fits a mesh dim.
Prepared prepare(const char* op, const std::vector<DTensor>& inputs, const StrategiesForMeshDim& strategies);

// The estimated time of moving `t` on one mesh dim from `from` to `to` (0 for local changes,
// infinity for impossible ones).
double redistribution_cost(const DTensor& t, size_t mesh_dim, const Placement& from, const Placement& to);

// A shard placement on `dim` with the strategy `like` uses when it is a shard, else the default.
Placement shard_like(const Placement& like, int64_t dim);

}  // namespace tessera::dtensor
