// Recursive-doubling all-gather (MPICH's MPIR_Allgather_intra_recursive_doubling): rank r places
// its input in block r of its output, then the owned window doubles each step. Power-of-two groups
// only; like MPICH, other sizes are left to Bruck or ring (the check makes the host fall back).
#include "rd.hpp"

namespace tessera::rd {

void all_gather(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;
  const PowerOfTwoFold fold(p);  // rem == 0: participant v is rank v
  for (int32_t r = 0; r < p; ++r)
    s.copy(r, sdk::chunk(TESSERA_BUFFER_OUTPUT, r * n, n), sdk::chunk(TESSERA_BUFFER_INPUT, 0, n));
  all_gather_doubling(s, fold, std::vector<int32_t>(p, TESSERA_BUFFER_OUTPUT), sdk::block_offsets(p * n, p));
}

}  // namespace tessera::rd
