// Bruck's algorithms (Bruck et al., "Efficient algorithms for all-to-all communications in
// multiport message-passing systems", 1997) in libtessera-coll-bruck.so: ceil(log2 p) steps for any
// p, rank r sending to r - 2^k or r + 2^k. Fewest latencies of all, at the price of local
// rotations and (all-to-all) each block travelling several hops: small-message algorithms.
#pragma once

#include <cstdint>

#include "tessera/sdk/cpp/algorithm_builder.hpp"

namespace tessera::bruck {

using sdk::Schedule;

using sdk::wrap;

using sdk::schedule_trivial;

void all_gather(const tessera_collective_request& request, const Schedule& s);
void all_to_all(const tessera_collective_request& request, const Schedule& s);

}  // namespace tessera::bruck
