// Binomial all-reduce: a binomial reduce to group rank 0, then a binomial broadcast from it. 2 log p
// message latencies with the whole message each time, so a small-message algorithm. Every rank
// needs an output anyway, so inner ranks accumulate there; the broadcast then overwrites their
// partial results with rank 0's, and every rank ends with bitwise the same values.
#include "tree.hpp"

namespace tessera::tree {

void all_reduce(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  binomial_reduce(s, request.group_size, request.count, /*root=*/0, /*accumulate_in_output=*/true);
  binomial_broadcast(s, request.group_size, request.count, /*root=*/0);
}

}  // namespace tessera::tree
