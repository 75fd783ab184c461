// Ring reduce-scatter: the first half of the ring all-reduce, shifted by one block so that rank r
// ends owning block r (the collective's definition) rather than block r + 1.
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

  for (int32_t r = 0; r < p; ++r) {
    const int32_t right = right_of(r, p), left = left_of(r, p);
    const int32_t scratch = s.add_buffer(r, p * n);
    auto block = [&](int64_t index) { return sdk::chunk(scratch, wrap(index, p) * n, n); };
    s.copy(r, sdk::chunk(scratch, 0, p * n), sdk::chunk(TESSERA_BUFFER_INPUT, 0, p * n));
    for (int32_t step = 0; step < p - 1; ++step) {
      s.send(r, block(r - step - 1), right);
      s.recv_reduce(r, block(r - step - 2), left);
    }
    s.copy(r, sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n), block(r));
  }
}

}  // namespace tessera::ring
