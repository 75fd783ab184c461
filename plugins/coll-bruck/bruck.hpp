// Bruck's algorithms (Bruck et al., "Efficient algorithms for all-to-all communications in
// multiport message-passing systems", 1997) in libtessera-coll-bruck.so: ceil(log2 p) steps for any
// p, rank r sending to r - 2^k or r + 2^k. Fewest latencies of all, at the price of local
// rotations and (all-to-all) each block travelling several hops: small-message algorithms.
#pragma once

#include <cstdint>

#include "tessera/sdk/cpp/algorithm_builder.hpp"

namespace tessera::bruck {

using sdk::Schedule;

inline int32_t wrap(int64_t rank, int32_t p) { return static_cast<int32_t>(((rank % p) + p) % p); }

// A group of one has nothing to exchange and count 0 nothing to move: the schedule is at most the
// local copy the collective's definition asks for. Returns true when it handled the request.
inline bool schedule_trivial(const tessera_collective_request& request, const Schedule& s) {
  if (request.count == 0) return true;
  if (request.group_size > 1) return false;
  s.copy(0, sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, request.count),
         sdk::chunk(TESSERA_BUFFER_INPUT, 0, request.count));
  return true;
}

void all_gather(const tessera_collective_request& request, const Schedule& s);
void all_to_all(const tessera_collective_request& request, const Schedule& s);

}  // namespace tessera::bruck
