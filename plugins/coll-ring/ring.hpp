// The ring algorithms of libtessera-coll-ring.so (NCCL, Gloo and Baidu's ring): every rank talks
// only to its neighbours, rank r sending to r + 1 and receiving from r - 1 (mod p). Each of the
// p - 1 steps moves one block per rank, so the bandwidth term is optimal for large messages and the
// latency term grows linearly with p.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/sdk/cpp/algorithm_builder.hpp"

namespace tessera::ring {

using sdk::Schedule;

inline int32_t wrap(int64_t rank, int32_t p) { return static_cast<int32_t>(((rank % p) + p) % p); }
inline int32_t right_of(int32_t rank, int32_t p) { return wrap(rank + 1, p); }
inline int32_t left_of(int32_t rank, int32_t p) { return wrap(rank - 1, p); }

// A group of one has nothing to exchange and count 0 nothing to move: the schedule is at most the
// local copy the collective's definition asks for. Returns true when it handled the request.
inline bool schedule_trivial(const tessera_collective_request& request, const Schedule& s) {
  if (request.count == 0) return true;
  if (request.group_size > 1) return false;
  // In and out have the same size when p == 1, whatever the collective.
  s.copy(0, sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, request.count),
         sdk::chunk(TESSERA_BUFFER_INPUT, 0, request.count));
  return true;
}

void all_reduce(const tessera_collective_request& request, const Schedule& s);
void all_gather(const tessera_collective_request& request, const Schedule& s);
void reduce_scatter(const tessera_collective_request& request, const Schedule& s);

}  // namespace tessera::ring
