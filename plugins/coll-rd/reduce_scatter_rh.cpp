// Recursive-halving reduce-scatter (MPICH's recursive halving for commutative ops): half the data
// at the first step, a quarter at the next, ..., log2 p latencies in all. Power-of-two groups only
// (the check makes the host fall back otherwise).
//
// The input is read-only and the output holds one block, so every rank works in a scratch copy of
// its input and copies its reduced block r out at the end.
#include "rd.hpp"

namespace tessera::rd {

void reduce_scatter(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;
  const PowerOfTwoFold fold(p);  // rem == 0: participant v is rank v
  std::vector<int32_t> scratch(p);
  for (int32_t r = 0; r < p; ++r) {
    scratch[r] = s.add_buffer(r, p * n);
    s.copy(r, sdk::chunk(scratch[r], 0, p * n), sdk::chunk(TESSERA_BUFFER_INPUT, 0, p * n));
  }
  reduce_scatter_halving(s, fold, scratch, sdk::block_offsets(p * n, p));
  for (int32_t r = 0; r < p; ++r)
    s.copy(r, sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n), sdk::chunk(scratch[r], r * n, n));
}

}  // namespace tessera::rd
