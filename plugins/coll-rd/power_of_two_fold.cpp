// The non-power-of-two pre and post steps of MPICH's recursive-doubling and Rabenseifner
// all-reduces (see PowerOfTwoFold): one extra message latency at each end, and the even ranks of
// the first 2 * rem sit the middle out.
#include "rd.hpp"

namespace tessera::rd {

void fold_in(const Schedule& s, const PowerOfTwoFold& fold, int64_t n) {
  const tessera_chunk in = sdk::chunk(TESSERA_BUFFER_INPUT, 0, n);
  const tessera_chunk out = sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n);
  for (int32_t r = 0; r < fold.p; ++r) {
    if (fold.participant(r) < 0) {
      s.send(r, in, r + 1);  // its output is only written at fold_out
      continue;
    }
    s.copy(r, out, in);
    if (r < 2 * fold.rem) s.recv_reduce(r, out, r - 1);
  }
}

void fold_out(const Schedule& s, const PowerOfTwoFold& fold, int64_t n) {
  const tessera_chunk out = sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n);
  for (int32_t r = 0; r < 2 * fold.rem; r += 2) {
    s.send(r + 1, out, r);
    s.recv(r, out, r + 1);
  }
}

}  // namespace tessera::rd
