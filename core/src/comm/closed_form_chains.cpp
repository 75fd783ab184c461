#include "comm/closed_form_chains.hpp"

#include <utility>

namespace tessera::comm {

NodeList::NodeList(int32_t group_size, int32_t reduce_op)
    : p_(group_size), commutes_(commutes_bitwise(reduce_op)) {}

int32_t NodeList::add(int32_t left, int64_t left_offset, int32_t right, int64_t right_offset, int64_t length) {
  if (commutes_ && std::pair(right, right_offset) < std::pair(left, left_offset)) {
    std::swap(left, right);
    std::swap(left_offset, right_offset);
  }
  PlanNode& node = nodes_.emplace_back();
  node.left = left;
  node.left_offset = left_offset;
  node.right = right;
  node.right_offset = right_offset;
  node.length = length;
  return p_ + static_cast<int32_t>(nodes_.size() - 1);
}

ValueAt rank_order_chain(int32_t p, int64_t n, int64_t offset, NodeList& nodes) {
  ValueAt value{0, offset};
  for (int32_t i = 1; i < p; ++i) value = {nodes.add(value.value, value.offset, i, offset, n), 0};
  return value;
}

std::vector<ValueAt> direct_reduce_scatter_chains(int32_t p, int64_t n, NodeList& nodes) {
  std::vector<ValueAt> chains(static_cast<size_t>(p));
  nodes.reserve(static_cast<size_t>(p) * static_cast<size_t>(p - 1));
  for (int32_t r = 0; r < p; ++r) chains[static_cast<size_t>(r)] = {0, int64_t{r} * n};
  auto fold = [&](int32_t r, int32_t i) {
    ValueAt& chain = chains[static_cast<size_t>(r)];
    chain = {nodes.add(chain.value, chain.offset, i, int64_t{r} * n, n), 0};
  };
  // First sweep: rank r has every lower rank's message and its own input, and waits for rank r + 1's.
  for (int32_t r = 1; r < p; ++r)
    for (int32_t i = 1; i <= r; ++i) fold(r, i);
  // Second sweep: every message has been sent.
  for (int32_t r = 0; r + 1 < p; ++r)
    for (int32_t i = r + 1; i < p; ++i) fold(r, i);
  return chains;
}

std::vector<ValueAt> ring_reduce_scatter_chains(const std::vector<int32_t>& ring, int64_t n, NodeList& nodes) {
  const int32_t p = static_cast<int32_t>(ring.size());
  const int32_t steps = p - 1;
  auto rank_at = [&](int32_t position) { return ring[static_cast<size_t>(((position % p) + p) % p)]; };
  std::vector<int32_t> position_of(static_cast<size_t>(p));
  for (int32_t k = 0; k < p; ++k) position_of[static_cast<size_t>(ring[static_cast<size_t>(k)])] = k;
  // Per position: the messages it has sent and the blocks it has folded (step s sends, then folds);
  // the node it made at each step, what its next message carries.
  std::vector<int32_t> sent(static_cast<size_t>(p), 0), folded(static_cast<size_t>(p), 0);
  std::vector<int32_t> made(static_cast<size_t>(p) * static_cast<size_t>(steps));
  nodes.reserve(made.size());
  auto made_at = [&](int32_t position, int32_t step) -> int32_t& {
    return made[static_cast<size_t>(position) * static_cast<size_t>(steps) + static_cast<size_t>(step)];
  };
  // Sweeps of the ranks in rank order, each rank going on until its message has not been sent yet,
  // as the runner takes turns (schedule_runner.hpp).
  for (bool progress = true; progress;) {
    progress = false;
    for (int32_t r = 0; r < p; ++r) {
      const int32_t k = position_of[static_cast<size_t>(r)];
      const int32_t from = (k + p - 1) % p;
      for (int32_t& s = folded[static_cast<size_t>(k)]; s < steps; ++s) {
        if (sent[static_cast<size_t>(k)] == s) {
          ++sent[static_cast<size_t>(k)];
          progress = true;
        }
        if (sent[static_cast<size_t>(from)] <= s) break;
        // The block of the rank at position k - s - 2: this rank's input there, and what position
        // k - 1 sent of it (its input at the first step, afterwards the node it made the step before).
        const int64_t offset = int64_t{rank_at(k - s - 2)} * n;
        const ValueAt incoming = s == 0 ? ValueAt{rank_at(from), offset} : ValueAt{made_at(from, s - 1), 0};
        made_at(k, s) = nodes.add(r, offset, incoming.value, incoming.offset, n);
        progress = true;
      }
    }
  }
  std::vector<ValueAt> results(static_cast<size_t>(p));
  for (int32_t k = 0; k < p; ++k) results[static_cast<size_t>(ring[static_cast<size_t>(k)])] = {made_at(k, steps - 1), 0};
  return results;
}

}  // namespace tessera::comm
