// Rabenseifner's all-reduce (MPICH's MPIR_Allreduce_intra_reduce_scatter_allgather): a
// recursive-halving reduce-scatter then a recursive-doubling all-gather, both over pof2 near-equal
// blocks of the output (block_offsets(n, pof2)). 2 log2 pof2 latencies but only about 2n elements
// sent per rank, so a large-message algorithm. Non-power-of-two groups fold in and out as in the
// recursive-doubling all-reduce.
//
// Each block is reduced by one participant (recursive halving) and only copied afterwards, so every
// rank ends with bitwise the same values.
#include "rd.hpp"

namespace tessera::rd {

void all_reduce_rabenseifner(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const PowerOfTwoFold fold(request.group_size);
  const std::vector<int32_t> outputs(request.group_size, TESSERA_BUFFER_OUTPUT);
  const std::vector<int64_t> offsets = sdk::block_offsets(request.count, fold.pof2);
  fold_in(s, fold, request.count);
  reduce_scatter_halving(s, fold, outputs, offsets);
  all_gather_doubling(s, fold, outputs, offsets);
  fold_out(s, fold, request.count);
}

}  // namespace tessera::rd
