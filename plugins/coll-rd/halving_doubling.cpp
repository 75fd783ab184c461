// Recursive halving and recursive doubling over the pof2 participants, the halves of every
// algorithm in this plugin.
//
// Halving: the distance starts at pof2 / 2 and halves. Participant v keeps a window of blocks
// [lo, hi), at first all pof2; at distance d it keeps the half of the window on its side of bit d
// (the upper half when v has bit d set), sends the other half to partner v ^ d and folds the
// partner's copy of its kept half into its own. The windows shrink to [v, v + 1): block v has been
// reduced over every participant, each block on one binomial tree, so no two ranks compute it.
//
// Doubling: the reverse. At distance d = 1, 2, 4, ... participant v owns the d blocks of its
// aligned window [v & ~(d - 1), + d), sends them to v ^ d and receives the partner's window, so the
// owned window doubles each step.
#include "rd.hpp"

namespace tessera::rd {
namespace {

tessera_chunk blocks(int32_t buffer, const std::vector<int64_t>& offsets, int32_t first, int32_t end) {
  return sdk::chunk(buffer, offsets[first], offsets[end] - offsets[first]);
}

}  // namespace

void reduce_scatter_halving(const Schedule& s, const PowerOfTwoFold& fold,
                            const std::vector<int32_t>& buffers, const std::vector<int64_t>& offsets) {
  for (int32_t v = 0; v < fold.pof2; ++v) {
    const int32_t r = fold.rank(v);
    int32_t lo = 0, hi = fold.pof2;
    for (int32_t distance = fold.pof2 / 2; distance >= 1; distance /= 2) {
      const int32_t partner = fold.rank(v ^ distance);
      const int32_t mid = lo + distance;
      const bool upper = (v & distance) != 0;
      const int32_t keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
      s.send(r, blocks(buffers[r], offsets, upper ? lo : mid, upper ? mid : hi), partner);
      s.recv_reduce(r, blocks(buffers[r], offsets, keep_lo, keep_hi), partner);
      lo = keep_lo;
      hi = keep_hi;
    }
  }
}

void all_gather_doubling(const Schedule& s, const PowerOfTwoFold& fold, const std::vector<int32_t>& buffers,
                         const std::vector<int64_t>& offsets) {
  for (int32_t v = 0; v < fold.pof2; ++v) {
    const int32_t r = fold.rank(v);
    for (int32_t distance = 1; distance < fold.pof2; distance *= 2) {
      const int32_t partner_v = v ^ distance;
      const int32_t mine = v & ~(distance - 1), theirs = partner_v & ~(distance - 1);
      s.send(r, blocks(buffers[r], offsets, mine, mine + distance), fold.rank(partner_v));
      s.recv(r, blocks(buffers[r], offsets, theirs, theirs + distance), fold.rank(partner_v));
    }
  }
}

}  // namespace tessera::rd
