// Ring all-gather: rank r places its input in block r of its output, then for step s = 0 .. p-2
// sends block r - s (its own at first, afterwards the one it received last) to its right
// neighbour and receives block r - s - 1 from its left neighbour. After p - 1 steps every block has
// gone round the ring once.
#include "ring.hpp"

namespace tessera::ring {

void all_gather(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;
  // The output's blocks are fixed by the collective: block i (n elements) is rank i's input.
  auto block = [&](int64_t index) { return sdk::chunk(TESSERA_BUFFER_OUTPUT, wrap(index, p) * n, n); };

  for (int32_t r = 0; r < p; ++r) {
    const int32_t right = right_of(r, p), left = left_of(r, p);
    s.copy(r, block(r), sdk::chunk(TESSERA_BUFFER_INPUT, 0, n));
    for (int32_t step = 0; step < p - 1; ++step) {
      s.send(r, block(r - step), right);
      s.recv(r, block(r - step - 1), left);
    }
  }
}

}  // namespace tessera::ring
