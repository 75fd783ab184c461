// Ring all-gather: the rank at ring position k places its input in its own output block, then for
// step s = 0 .. p-2 sends the block from position k - s (its own at first, afterwards the one it
// received last) to the next rank and receives the block from position k - s - 1 from the
// previous one. After p - 1 steps every block has
// gone round the ring once.
#include "ring.hpp"

namespace tessera::ring {

void all_gather(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;
  const Ring ring(request);
  // The output's blocks are fixed by the collective: block i (n elements) is rank i's input; the
  // block travelling from ring position j is that of the rank standing there.
  auto block = [&](int64_t position) {
    return sdk::chunk(TESSERA_BUFFER_OUTPUT, ring.rank_at(position) * n, n);
  };

  for (int32_t k = 0; k < p; ++k) {
    const int32_t r = ring.rank_at(k), right = ring.rank_at(k + 1), left = ring.rank_at(k - 1);
    s.copy(r, block(k), sdk::chunk(TESSERA_BUFFER_INPUT, 0, n));
    for (int32_t step = 0; step < p - 1; ++step) {
      s.send(r, block(k - step), right);
      s.recv(r, block(k - step - 1), left);
    }
  }
}

}  // namespace tessera::ring
