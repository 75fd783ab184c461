// Binomial reduce (MPICH's MPIR_Reduce_intra_binomial for commutative ops): each rank folds in its
// children's partial results, nearest child first (that child is a leaf, so its message is ready
// soonest), then sends its own partial result to its parent. The root's accumulator is its output.
//
// The input is read-only, so a rank with children first copies its input into an accumulator; a
// leaf has nothing to fold and sends its input directly. Other ranks' outputs are not part of the
// result, so there the accumulator is a scratch buffer and the output stays untouched.
#include "tree.hpp"

namespace tessera::tree {

void binomial_reduce(const Schedule& s, int32_t p, int64_t n, int32_t root, bool accumulate_in_output) {
  const tessera_chunk in = sdk::chunk(TESSERA_BUFFER_INPUT, 0, n);
  for (int32_t r = 0; r < p; ++r) {
    const BinomialNode node = binomial_node(r, root, p);
    tessera_chunk partial = in;
    if (!node.children.empty() || r == root) {
      const bool in_output = r == root || accumulate_in_output;
      partial = sdk::chunk(in_output ? TESSERA_BUFFER_OUTPUT : s.add_buffer(r, n), 0, n);
      s.copy(r, partial, in);
    }
    for (int32_t child : node.children) s.recv_reduce(r, partial, child);
    if (node.parent >= 0) s.send(r, partial, node.parent);
  }
}

void reduce(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  binomial_reduce(s, request.group_size, request.count, request.root, /*accumulate_in_output=*/false);
}

}  // namespace tessera::tree
