// Recursive-doubling all-reduce (MPICH's MPIR_Allreduce_intra_recursive_doubling): after folding
// the extra ranks in, at distance d = 1, 2, 4, ... participant v exchanges its whole partial result
// with v ^ d and combines. log2 pof2 latencies with the whole message each, so a small-message
// algorithm.
//
// Partners combine the same two partial results, one as `mine op theirs` and the other as
// `theirs op mine`; every reduce op is commutative, so both get bitwise the same value, and by
// induction all participants end identical.
#include "rd.hpp"

namespace tessera::rd {

void all_reduce(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const PowerOfTwoFold fold(request.group_size);
  const tessera_chunk out = sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, request.count);
  fold_in(s, fold, request.count);
  for (int32_t v = 0; v < fold.pof2; ++v) {
    for (int32_t distance = 1; distance < fold.pof2; distance *= 2) {
      // The send is buffered, so it carries the partial result from before this step's combine.
      s.send(fold.rank(v), out, fold.rank(v ^ distance));
      s.recv_reduce(fold.rank(v), out, fold.rank(v ^ distance));
    }
  }
  fold_out(s, fold, request.count);
}

}  // namespace tessera::rd
