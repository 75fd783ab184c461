// The reductions of the bundled direct, ring and recursive-halving algorithms, written down as
// derive_plan's symbolic run of their schedules makes them: the same nodes, with the same operands.
// The order matters: nodes are numbered as they are made, and plan_from_values keeps that order
// among nodes of one depth, so an equal plan needs the run's order, not just its values. The direct
// and ring reduce_scatters of short blocks (orders_by_depth) make their nodes in the order the plan
// puts the run's nodes in (by depth, chains aligned), which the plan then takes without sorting a
// million nodes; otherwise each makes them in the run's own order.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/schedule_plan.hpp"

namespace tessera::comm {

// Nodes `left op right` of `length` elements, made as the symbolic run makes them: under an op
// that commutes bitwise the smaller (value, offset) goes on the left; node i is value p + i.
class NodeList {
 public:
  NodeList(int32_t group_size, int32_t reduce_op);
  // Room for `count` more nodes: a reduce_scatter's p (p - 1) would otherwise be copied as the
  // list grows.
  void reserve(size_t count) { nodes_.reserve(nodes_.size() + count); }
  int32_t add(int32_t left, int64_t left_offset, int32_t right, int64_t right_offset, int64_t length);
  std::vector<PlanNode> take() { return std::move(nodes_); }

 private:
  int32_t p_;
  bool commutes_;
  std::vector<PlanNode> nodes_;
};

// A value and the element of it a run starts at.
struct ValueAt {
  int32_t value;
  int64_t offset;
};

// Input 0 op input 1 op ... op input p-1 over `n` elements from `offset` of each, the chain the
// direct reduction computes; the result (input 0 itself when p is 1). n must be positive.
ValueAt rank_order_chain(int32_t p, int64_t n, int64_t offset, NodeList& nodes);

// The direct reduce_scatter: rank r's block is the rank-order chain of every input's block r. Every
// rank sends before it combines, so the run's first sweep of the ranks takes rank r's chain as far
// as its own input and the second finishes it. Returns rank r's result per rank; n must be positive.
std::vector<ValueAt> direct_reduce_scatter_chains(int32_t p, int64_t n, NodeList& nodes);

// The ring reduce_scatter round `ring` (the group ranks in ring order): the rank at position k folds
// the block arriving from position k - 1 into its own at every step, the run making each fold when
// the sweep reaches the rank and its message has been sent. Returns rank r's result per rank;
// needs p >= 2 and n positive.
std::vector<ValueAt> ring_reduce_scatter_chains(const std::vector<int32_t>& ring, int64_t n, NodeList& nodes);

// The recursive-halving reduce_scatter over a power-of-two group of p >= 2: at distance d = p/2,
// p/4, ..., 1 rank v keeps the half of its window of blocks on its side of bit d and folds rank
// v ^ d's copy of it into its own; a window is one value throughout (the input, then the node of
// the step before), so each fold is one node over the whole half. The run makes a fold when the
// sweep reaches the rank and its partner has sent. Returns rank r's result per rank; n positive.
std::vector<ValueAt> halving_reduce_scatter_chains(int32_t p, int64_t n, NodeList& nodes);

}  // namespace tessera::comm
