// The ring algorithms of libtessera-coll-ring.so (NCCL, Gloo and Baidu's ring): every rank talks
// only to its neighbours on the ring, sending to the next and receiving from the previous. Each of the
// p - 1 steps moves one block per rank, so the bandwidth term is optimal for large messages and the
// latency term grows linearly with p.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/sdk/cpp/algorithm_builder.hpp"

namespace tessera::ring {

using sdk::Schedule;

inline int32_t wrap(int64_t rank, int32_t p) { return static_cast<int32_t>(((rank % p) + p) % p); }

// The ring the ranks form: the host's ring order (neighbours close in the topology) when it gives
// one, else 0, 1, ..., p-1. The algorithms work on positions round the ring; rank_at maps a
// position (any integer, taken mod p) to the group rank standing there.
class Ring {
 public:
  explicit Ring(const tessera_collective_request& request) : p_(request.group_size) {
    const bool given = request.struct_size >= offsetof(tessera_collective_request, ring_order) + sizeof(void*) &&
                       request.ring_order != nullptr;
    for (int32_t k = 0; k < p_; ++k) order_.push_back(given ? request.ring_order[k] : k);
  }
  int32_t size() const { return p_; }
  int32_t rank_at(int64_t position) const { return order_[static_cast<size_t>(wrap(position, p_))]; }

 private:
  int32_t p_;
  std::vector<int32_t> order_;
};

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
