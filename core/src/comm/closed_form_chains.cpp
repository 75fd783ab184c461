#include "comm/closed_form_chains.hpp"

#include <utility>

namespace tessera::comm {
namespace {

// The runner's sweeps over the ranks of a schedule in which every rank, step by step, sends one
// message and then folds in the one a partner sent it for that step (schedule_runner.hpp takes
// turns so: each rank, in rank order, goes on until the message it needs has not been sent yet).
// Calls fold(v, s) for rank v's step s at the moment the run makes that fold; partner(v, s) is the
// rank whose step-s message it folds.
template <class Partner, class Fold>
void sweep_folds(int32_t p, int32_t steps, Partner partner, Fold fold) {
  std::vector<int32_t> sent(static_cast<size_t>(p), 0), folded(static_cast<size_t>(p), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int32_t v = 0; v < p; ++v) {
      for (int32_t& s = folded[static_cast<size_t>(v)]; s < steps; ++s) {
        if (sent[static_cast<size_t>(v)] == s) {
          ++sent[static_cast<size_t>(v)];
          progress = true;
        }
        if (sent[static_cast<size_t>(partner(v, s))] <= s) break;
        fold(v, s);
        progress = true;
      }
    }
  }
}

}  // namespace

NodeList::NodeList(int32_t group_size, int32_t reduce_op)
    : p_(group_size), commutes_(commutes_bitwise(reduce_op)) {}

int32_t NodeList::add(int32_t left, int64_t left_offset, int32_t right, int64_t right_offset,
                      int64_t length) {
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
  if (orders_by_depth(n)) {
    // In the plan's order, which the plan then takes as it is: a depth at a time (the chains'
    // i-th folds), and within one in the order the run first reaches the chains: ranks 1 to p - 1
    // in its first sweep, rank 0 in its second.
    for (int32_t i = 1; i < p; ++i) {
      for (int32_t r = 1; r < p; ++r) fold(r, i);
      fold(0, i);
    }
    return chains;
  }
  // In the run's order. First sweep: rank r has every lower rank's message and its own input, and
  // waits for rank r + 1's.
  for (int32_t r = 1; r < p; ++r)
    for (int32_t i = 1; i <= r; ++i) fold(r, i);
  // Second sweep: every message has been sent.
  for (int32_t r = 0; r + 1 < p; ++r)
    for (int32_t i = r + 1; i < p; ++i) fold(r, i);
  return chains;
}

std::vector<ValueAt> ring_reduce_scatter_chains(const std::vector<int32_t>& ring, int64_t n,
                                                NodeList& nodes) {
  const int32_t p = static_cast<int32_t>(ring.size());
  const int32_t steps = p - 1;
  auto rank_at = [&](int32_t position) { return ring[static_cast<size_t>(((position % p) + p) % p)]; };
  std::vector<int32_t> position_of(static_cast<size_t>(p));
  for (int32_t k = 0; k < p; ++k) position_of[static_cast<size_t>(ring[static_cast<size_t>(k)])] = k;
  // Per position, the node it made at each step: what its next message carries.
  std::vector<int32_t> made(static_cast<size_t>(p) * static_cast<size_t>(steps));
  nodes.reserve(made.size());
  auto made_at = [&](int32_t position, int32_t step) -> int32_t& {
    return made[static_cast<size_t>(position) * static_cast<size_t>(steps) + static_cast<size_t>(step)];
  };
  // A rank folds what the position before it sends.
  const auto from = [&](int32_t r) { return (position_of[static_cast<size_t>(r)] + p - 1) % p; };
  const auto fold = [&](int32_t r, int32_t s) {
    const int32_t k = position_of[static_cast<size_t>(r)];
    // The block of the rank at position k - s - 2: this rank's input there, and what position
    // k - 1 sent of it (its input at the first step, afterwards the node it made the step before).
    const int64_t offset = int64_t{rank_at(k - s - 2)} * n;
    const ValueAt incoming = s == 0 ? ValueAt{rank_at(from(r)), offset} : ValueAt{made_at(from(r), s - 1), 0};
    made_at(k, s) = nodes.add(r, offset, incoming.value, incoming.offset, n);
  };
  if (orders_by_depth(n)) {
    // In the plan's order, which the plan then takes as it is: a step at a time. The first step's
    // folds in the order the run makes them: in its first sweep those of the ranks whose
    // predecessor came before them in the sweep (and so has sent), the others in its second; each
    // later step's in the order of the folds they continue (position k's continues k - 1's).
    std::vector<int32_t> first_wave;  // positions
    for (int32_t r = 0; r < p; ++r)
      if (rank_at(from(r)) < r) first_wave.push_back(position_of[static_cast<size_t>(r)]);
    for (int32_t r = 0; r < p; ++r)
      if (rank_at(from(r)) > r) first_wave.push_back(position_of[static_cast<size_t>(r)]);
    for (int32_t s = 0; s < steps; ++s)
      for (const int32_t k : first_wave) fold(rank_at(k + s), s);
  } else {
    sweep_folds(
        p, steps, [&](int32_t r, int32_t) { return rank_at(from(r)); }, fold);
  }
  std::vector<ValueAt> results(static_cast<size_t>(p));
  for (int32_t k = 0; k < p; ++k)
    results[static_cast<size_t>(ring[static_cast<size_t>(k)])] = {made_at(k, steps - 1), 0};
  return results;
}

std::vector<ValueAt> halving_reduce_scatter_chains(int32_t p, int64_t n, NodeList& nodes) {
  int32_t steps = 0;
  while ((int32_t{1} << steps) < p) ++steps;
  const auto at = [&](int32_t v, int32_t step) {
    return static_cast<size_t>(v) * static_cast<size_t>(steps) + static_cast<size_t>(step);
  };
  // Per rank and step, the window it kept (its first block) and the node holding it.
  std::vector<int32_t> made(static_cast<size_t>(p) * static_cast<size_t>(steps));
  std::vector<int32_t> kept_lo(made.size());
  nodes.reserve(made.size());
  // What rank v holds of the blocks from `first` before its fold at `step`: its input there at
  // first, afterwards inside the node of its previous fold, whose window starts at kept_lo.
  const auto held = [&](int32_t v, int32_t step, int32_t first) {
    return step == 0 ? ValueAt{v, int64_t{first} * n}
                     : ValueAt{made[at(v, step - 1)], int64_t{first - kept_lo[at(v, step - 1)]} * n};
  };
  const auto distance = [&](int32_t s) { return p >> (s + 1); };
  sweep_folds(
      p, steps, [&](int32_t v, int32_t s) { return v ^ distance(s); },
      [&](int32_t v, int32_t s) {
        const int32_t d = distance(s);
        // The window before this step is v's bits above d; v keeps the half on its side.
        const int32_t lo = (v & ~(2 * d - 1)) + ((v & d) != 0 ? d : 0);
        const ValueAt mine = held(v, s, lo), theirs = held(v ^ d, s, lo);
        made[at(v, s)] = nodes.add(mine.value, mine.offset, theirs.value, theirs.offset, int64_t{d} * n);
        kept_lo[at(v, s)] = lo;
      });
  std::vector<ValueAt> results(static_cast<size_t>(p));
  for (int32_t v = 0; v < p; ++v) results[static_cast<size_t>(v)] = {made[at(v, steps - 1)], 0};
  return results;
}

}  // namespace tessera::comm
