// Bruck all-gather (MPICH's MPIR_Allgather_intra_brucks). Rank r gathers in a scratch buffer of
// p blocks where block i is rank r + i's input, so what it has is always a prefix: block 0 (its
// own) at first, then at distance d = 1, 2, 4, ... (while 2d <= p) it sends its first d blocks to
// r - d and receives r + d's first d blocks after them. If p is not a power of two, one last step
// sends the first p - d blocks the same way. That is ceil(log2 p) steps for any p.
//
// The prefix layout is rotated by r against the output's (block i is rank i's), so a final local
// rotation copies scratch blocks [0, p - r) to output blocks [r, p) and [p - r, p) to [0, r).
#include "bruck.hpp"

namespace tessera::bruck {

void all_gather(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;

  for (int32_t r = 0; r < p; ++r) {
    const int32_t gathered = s.add_buffer(r, p * n);
    auto blocks = [&](int32_t buffer, int64_t first, int64_t count) {
      return sdk::chunk(buffer, first * n, count * n);
    };
    s.copy(r, blocks(gathered, 0, 1), sdk::chunk(TESSERA_BUFFER_INPUT, 0, n));
    int32_t have = 1;  // also the distance of the current step
    while (have < p) {
      const int32_t moving = have * 2 <= p ? have : p - have;  // the last step fills the rest
      s.send(r, blocks(gathered, 0, moving), wrap(r - have, p));
      s.recv(r, blocks(gathered, have, moving), wrap(r + have, p));
      have += moving;
    }
    s.copy(r, blocks(TESSERA_BUFFER_OUTPUT, r, p - r), blocks(gathered, 0, p - r));
    if (r > 0) s.copy(r, blocks(TESSERA_BUFFER_OUTPUT, 0, r), blocks(gathered, p - r, r));
  }
}

}  // namespace tessera::bruck
