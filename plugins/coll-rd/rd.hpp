// The recursive-doubling family of libtessera-coll-rd.so, MPICH's algorithms: recursive doubling
// (all-reduce, all-gather), recursive halving (reduce-scatter) and Rabenseifner's all-reduce
// (recursive-halving reduce-scatter + recursive-doubling all-gather). log2 p steps each, partners
// r ^ 2^k; they need a power-of-two group, which the all-reduces get by folding the extra ranks in
// first and out again at the end (PowerOfTwoFold).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/algorithm_builder.hpp"

namespace tessera::rd {

using sdk::Schedule;

inline bool is_power_of_two(int32_t p) { return p > 0 && (p & (p - 1)) == 0; }

// The precondition of the algorithms that have no fold: the host falls back to another algorithm.
inline void require_power_of_two(const tessera_collective_request& request) {
  if (!is_power_of_two(request.group_size))
    throw sdk::Error(TESSERA_UNIMPLEMENTED,
                     "needs a power-of-two group, got " + std::to_string(request.group_size));
}

// MPICH's way of running a power-of-two algorithm on p ranks: with pof2 the largest power of two
// <= p and rem = p - pof2, the first 2 * rem ranks pair up (2i, 2i + 1); the even rank hands its
// data to the odd one and sits out, leaving pof2 participants. Participant v is group rank
// 2v + 1 for v < rem and v + rem otherwise.
struct PowerOfTwoFold {
  int32_t p, pof2, rem;
  explicit PowerOfTwoFold(int32_t group_size) : p(group_size), pof2(1), rem(0) {
    while (pof2 * 2 <= p) pof2 *= 2;
    rem = p - pof2;
  }
  // Participant index of group rank r, or -1 for a rank that sits out.
  int32_t participant(int32_t r) const {
    if (r < 2 * rem) return r % 2 == 1 ? r / 2 : -1;
    return r - rem;
  }
  int32_t rank(int32_t v) const { return v < rem ? 2 * v + 1 : v + rem; }
};

// Start of a folded all-reduce: every participant copies its input into its output and the odd
// rank of each pair folds its even neighbour's input into it; the even rank sends its input as it
// is. End: the odd rank sends the result back into its even neighbour's output.
void fold_in(const Schedule& s, const PowerOfTwoFold& fold, int64_t n);
void fold_out(const Schedule& s, const PowerOfTwoFold& fold, int64_t n);

// The two building blocks over the participants, on a buffer of pof2 blocks (block i is
// [offsets[i], offsets[i + 1]) of buffers[rank], the buffer id of each group rank).
// Recursive halving: participant v ends with block v reduced over all participants (the other
// blocks hold partial results). Recursive doubling: participant v starts owning block v and ends
// with all of them.
void reduce_scatter_halving(const Schedule& s, const PowerOfTwoFold& fold,
                            const std::vector<int32_t>& buffers, const std::vector<int64_t>& offsets);
void all_gather_doubling(const Schedule& s, const PowerOfTwoFold& fold, const std::vector<int32_t>& buffers,
                         const std::vector<int64_t>& offsets);

using sdk::schedule_trivial;

void all_reduce(const tessera_collective_request& request, const Schedule& s);
void all_gather(const tessera_collective_request& request, const Schedule& s);
void reduce_scatter(const tessera_collective_request& request, const Schedule& s);
void all_reduce_rabenseifner(const tessera_collective_request& request, const Schedule& s);

}  // namespace tessera::rd
