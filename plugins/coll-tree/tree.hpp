// The binomial trees of libtessera-coll-tree.so, MPICH's shape (MPIR_Bcast_intra_binomial,
// MPIR_Reduce_intra_binomial). Ranks are renumbered relative to the root, v = (r - root + p) % p;
// the parent of v > 0 is v with its lowest set bit cleared and its children are v + 2^k for every
// 2^k below that bit (below p for the root). The tree has depth ceil(log2 p), so a broadcast or
// reduce of the whole message takes that many message latencies: good for small messages, while
// the root's links carry the full message log p times (use ring or Rabenseifner for large ones).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/sdk/cpp/algorithm_builder.hpp"

namespace tessera::tree {

using sdk::Schedule;

// One rank's place in the binomial tree rooted at `root`.
struct BinomialNode {
  int32_t parent = -1;            // group rank; -1 at the root
  std::vector<int32_t> children;  // group ranks, nearest (smallest subtree) first
};

inline BinomialNode binomial_node(int32_t rank, int32_t root, int32_t p) {
  const int32_t v = (rank - root + p) % p;
  auto real = [&](int32_t relative) { return (relative + root) % p; };
  BinomialNode node;
  int32_t mask = 1;
  for (; mask < p && (v & mask) == 0; mask <<= 1)
    if ((v | mask) < p) node.children.push_back(real(v | mask));
  if (v != 0) node.parent = real(v & ~mask);  // mask is v's lowest set bit here
  return node;
}

using sdk::schedule_trivial;

// The two halves, shared by all_reduce. Reduce: every rank with children folds its input and its
// children's partial results into an accumulator (the output at `root`; elsewhere the output when
// `accumulate_in_output`, else a scratch buffer), then sends it to its parent; leaves send their
// input as it is. Broadcast: the root's output (already filled) goes down the tree into every
// other rank's output.
void binomial_reduce(const Schedule& s, int32_t p, int64_t n, int32_t root, bool accumulate_in_output);
void binomial_broadcast(const Schedule& s, int32_t p, int64_t n, int32_t root);

void broadcast(const tessera_collective_request& request, const Schedule& s);
void reduce(const tessera_collective_request& request, const Schedule& s);
void all_reduce(const tessera_collective_request& request, const Schedule& s);

}  // namespace tessera::tree
