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

using sdk::wrap;

// The ring the ranks form: the host's ring order (neighbours close in the topology) when it gives
// one, else 0, 1, ..., p-1. The algorithms work on positions round the ring; rank_at maps a
// position (any integer, taken mod p) to the group rank standing there.
class Ring {
 public:
  explicit Ring(const tessera_collective_request& request) : p_(request.group_size) {
    const bool given =
        request.struct_size >= offsetof(tessera_collective_request, ring_order) + sizeof(void*) &&
        request.ring_order != nullptr;
    for (int32_t k = 0; k < p_; ++k) order_.push_back(given ? request.ring_order[k] : k);
  }
  int32_t size() const { return p_; }
  int32_t rank_at(int64_t position) const { return order_[static_cast<size_t>(wrap(position, p_))]; }

 private:
  int32_t p_;
  std::vector<int32_t> order_;
};

using sdk::schedule_trivial;

void all_reduce(const tessera_collective_request& request, const Schedule& s);
void all_gather(const tessera_collective_request& request, const Schedule& s);
void reduce_scatter(const tessera_collective_request& request, const Schedule& s);

}  // namespace tessera::ring
