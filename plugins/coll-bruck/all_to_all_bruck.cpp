// Bruck all-to-all (MPICH's MPIR_Alltoall_intra_brucks), in three phases on a scratch buffer of p
// blocks:
//   1. Local rotation: scratch block i = input block r + i, the block that has to travel i ranks
//      forward (to rank r + i).
//   2. For k = 0 .. ceil(log2 p) - 1: every block whose index has bit k set moves 2^k ranks
//      forward, to rank r + 2^k, landing at the same index (received from r - 2^k). A block at
//      index i thus moves i ranks in all, and afterwards scratch block i on rank r is rank r - i's
//      block for r.
//   3. Inverse rotation: output block j (from rank j) = scratch block r - j.
//
// A step's blocks are not contiguous. Sending each as its own message would cost p / 2 latencies
// per step and lose what Bruck is for (log p messages), so every rank packs them into a pack
// buffer with local copies, sends it as one message, receives the partner's pack into the same
// buffer (the send is buffered, so it is free again) and unpacks it into the same indices.
#include <algorithm>
#include <vector>

#include "bruck.hpp"

namespace tessera::bruck {

void all_to_all(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;

  // The block indices each step moves; the same on every rank.
  std::vector<std::vector<int32_t>> moving;
  size_t most = 0;
  for (int32_t distance = 1; distance < p; distance *= 2) {
    std::vector<int32_t>& step = moving.emplace_back();
    for (int32_t i = 0; i < p; ++i)
      if ((i & distance) != 0) step.push_back(i);
    most = std::max(most, step.size());
  }

  for (int32_t r = 0; r < p; ++r) {
    const int32_t work = s.add_buffer(r, p * n);
    const int32_t pack = s.add_buffer(r, static_cast<int64_t>(most) * n);
    auto blocks = [&](int32_t buffer, int64_t first, int64_t count) {
      return sdk::chunk(buffer, first * n, count * n);
    };

    // Phase 1: rotate up by r, as two contiguous copies.
    s.copy(r, blocks(work, 0, p - r), blocks(TESSERA_BUFFER_INPUT, r, p - r));
    if (r > 0) s.copy(r, blocks(work, p - r, r), blocks(TESSERA_BUFFER_INPUT, 0, r));

    // Phase 2: log2 steps, one packed message each.
    int32_t distance = 1;
    for (const std::vector<int32_t>& step : moving) {
      const int64_t count = static_cast<int64_t>(step.size());
      for (size_t k = 0; k < step.size(); ++k) s.copy(r, blocks(pack, k, 1), blocks(work, step[k], 1));
      s.send(r, blocks(pack, 0, count), wrap(r + distance, p));
      s.recv(r, blocks(pack, 0, count), wrap(r - distance, p));
      for (size_t k = 0; k < step.size(); ++k) s.copy(r, blocks(work, step[k], 1), blocks(pack, k, 1));
      distance *= 2;
    }

    // Phase 3: the inverse rotation (a reversal, so block by block).
    for (int32_t j = 0; j < p; ++j)
      s.copy(r, blocks(TESSERA_BUFFER_OUTPUT, j, 1), blocks(work, wrap(r - j, p), 1));
  }
}

}  // namespace tessera::bruck
