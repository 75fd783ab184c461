// Ring reduce-scatter: the first half of the ring all-reduce, shifted by one block so that every
// rank ends owning its own block (the collective's definition). Positions k round the ring stand
// in for ranks below (k is r itself when the ring is in rank order).
//
// The input may not be written and the output holds only one block, so every rank first copies its
// input into a scratch buffer of p * n elements. Step s = 0 .. p-2: rank r sends scratch block
// r - s - 1 to its right neighbour and folds block r - s - 2 arriving from its left neighbour into
// its own; the last block it folds (s = p - 2) is block r, now reduced over all ranks, which it
// copies to the output.
#include "ring.hpp"

namespace tessera::ring {

void reduce_scatter(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;

  const Ring ring(request);
  for (int32_t k = 0; k < p; ++k) {
    const int32_t r = ring.rank_at(k), right = ring.rank_at(k + 1), left = ring.rank_at(k - 1);
    const int32_t scratch = s.add_buffer(r, p * n);
    // Positions round the ring name blocks: the block of position j is destined for its rank.
    auto block = [&](int64_t position) { return sdk::chunk(scratch, ring.rank_at(position) * n, n); };
    s.copy(r, sdk::chunk(scratch, 0, p * n), sdk::chunk(TESSERA_BUFFER_INPUT, 0, p * n));
    for (int32_t step = 0; step < p - 1; ++step) {
      s.send(r, block(k - step - 1), right);
      s.recv_reduce(r, block(k - step - 2), left);
    }
    s.copy(r, sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n), block(k));
  }
}

}  // namespace tessera::ring
