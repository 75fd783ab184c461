// Binomial broadcast (MPICH's MPIR_Bcast_intra_binomial): the root copies its input to its output;
// every other rank receives the message from its parent into its output, then forwards it to its
// children, farthest (largest subtree) first so that the deepest branch starts earliest.
#include "tree.hpp"

namespace tessera::tree {

void binomial_broadcast(const Schedule& s, int32_t p, int64_t n, int32_t root) {
  const tessera_chunk out = sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n);
  for (int32_t r = 0; r < p; ++r) {
    const BinomialNode node = binomial_node(r, root, p);
    if (node.parent >= 0) s.recv(r, out, node.parent);
    for (auto child = node.children.rbegin(); child != node.children.rend(); ++child) s.send(r, out, *child);
  }
}

void broadcast(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int64_t n = request.count;
  s.copy(request.root, sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n), sdk::chunk(TESSERA_BUFFER_INPUT, 0, n));
  binomial_broadcast(s, request.group_size, n, request.root);
}

}  // namespace tessera::tree
