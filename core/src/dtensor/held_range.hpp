// Which global range of one tensor dim each rank of a DTensor holds, as per-rank values that local
// ops can compute with: the vocabulary-parallel embedding and the loss-parallel cross_entropy
// shift global indices by where the rank's rows (classes) start, and mask the indices outside.
#pragma once

#include "tessera/dtensor.hpp"

namespace tessera::dtensor {

struct HeldRange {
  Tensor start;     // local 0-d int64: the first global index of the dim the rank holds
  Tensor length;    // local 0-d int64: how many it holds (0 for an empty shard)
  bool some_empty;  // whether some rank holds none
};

// Each rank's part of dim `dim` of `t` must be one contiguous range (as Shard placements give);
// a placement that hands a rank several segments is an Error naming `op` and the placement.
HeldRange held_range(const DTensor& t, int64_t dim, const char* op);

}  // namespace tessera::dtensor
