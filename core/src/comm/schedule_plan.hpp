// What a schedule computes, derived once from its steps: which inputs are combined, in which order,
// into which output elements (docs/design.md, "Collectives in a simulated world").
//
// Replaying a schedule moves one message per step; a direct all_reduce over p ranks is p^2 of them.
// Its result, though, depends only on the reductions: run the schedule symbolically once (the same
// runner, schedule_runner.hpp, so messages match exactly as in a replay) with every buffer holding,
// per run of elements, a reference to the value there. A reduce step makes a node
// `left op right` (left: the destination's old value, right: the source, as the executor's kernel
// call orders them), hash-consed so that ranks computing the same expression share one node. The
// evaluator (plan_evaluator.hpp) then computes each node once and copies outputs together.
//
// Everything works on runs of elements, never single elements: the plan's size follows the number
// of steps, not the number of elements.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/schedule.hpp"

namespace tessera::comm {

// A value id: 0 .. p-1 are the group ranks' input buffers; p + i is plan node i; kUndefined is a
// value no step wrote (an output element the collective leaves unspecified, as replay does).
inline constexpr int32_t kUndefined = -1;

// `length` elements of value `value` starting at its element `offset`.
struct PlanRun {
  int64_t length;
  int32_t value;
  int64_t offset;
  bool operator==(const PlanRun&) const = default;
};

// An element of an evaluation's memory: element `at` of base `base` (see PlanNode).
struct PlanPlace {
  int32_t base = 0;
  int64_t at = 0;
};
// The base number of the arena and of group rank r's output buffer in a group of p; an undefined
// value has no base.
inline int32_t arena_base(int32_t p) { return p; }
inline int32_t output_base(int32_t p, int32_t r) { return p + 1 + r; }
inline constexpr int32_t kNoBase = -1;

// node[i] = left[left_offset + i] op right[right_offset + i] for i < length, with the schedule's
// reduce op. Nodes are listed by depth (a node's depth is one more than its operands'), so that
// every operand comes before its users and nodes of one depth are independent.
struct PlanNode {
  // The two value ids side by side: a plan of a million nodes is 8 bytes a node smaller unpadded.
  int32_t left;
  int32_t right;
  int64_t left_offset;
  int64_t right_offset;
  int64_t length;
  // Where its values live: element `slot` of the evaluation's scratch arena (home -1), or of group
  // rank `home`'s output buffer. A node that is the only use of an operand node takes over that
  // operand's storage (slot = the operand's slot + its offset) and is computed in place, as a
  // replay reduces into the same buffer step after step. Over the right operand, the kernel's
  // output is its second input: an element-wise kernel reads each element before writing it.
  static constexpr uint8_t kFresh = 0, kOverLeft = 1, kOverRight = 2;
  int64_t slot = 0;
  int32_t home = -1;
  uint8_t over = kFresh;
  // Where left and right live, resolved once (plan_base): a base (group rank r's input: r; the
  // arena: p; group rank r's output buffer: p + 1 + r) and an element offset there.
  PlanPlace left_place, right_place;
  // Where the node itself lives, in a group of p, from home and slot (not stored: a plan of a
  // million nodes is 16 MB smaller, and every pass over it reads that much less).
  PlanPlace out_place(int32_t p) const;
};

inline PlanPlace PlanNode::out_place(int32_t p) const {
  return PlanPlace{home < 0 ? arena_base(p) : output_base(p, home), slot};
}

// Nodes [first, first + count) of one depth and one small length: on host memory the evaluator
// gathers their operands and computes them with one kernel call (a wave of a ring's or a tree's
// reductions, one element per chain, costs one call, not one per rank).
struct PlanBatch {
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t first;
  size_t count;
  int64_t length;
  // PlanNode::kOverLeft (kOverRight) when node i of this batch continues node i of batch `from` (at
  // the depth before) in place, through its left (right) operand, whole, being that node's only
  // use: the next wave of a ring's chains. Blocks of two lengths make two such chains of batches,
  // interleaved (one batch of each length per depth). `continued_by` is the batch continuing this
  // one.
  uint8_t continues = PlanNode::kFresh;
  size_t from = kNone;
  size_t continued_by = kNone;
  // For a continued batch: where its nodes' other operands (the ones not carried over) start in
  // SchedulePlan::others, one per node in order; a chain's links follow each other there.
  size_t others = 0;
  // Whether this batch is part of a chain (continued_by / from links) that may be computed whole
  // when its first batch is, ahead of the batches between its links: true when every later link's
  // other operands are inputs or nodes before the first batch, so nothing computed in between
  // feeds it. The evaluator then keeps the chain in its staging buffer and folds it.
  bool chain_ahead = false;
};

struct SchedulePlan {
  int group_size = 0;
  int32_t reduce_op = 0;
  std::vector<PlanNode> nodes;
  std::vector<PlanBatch> batches;  // covering the nodes in order
  // The places continued batches gather from, side by side, chain by chain: a ring's waves read
  // them one after another, and a dense list streams where the nodes themselves (five times the
  // bytes) would not.
  std::vector<PlanPlace> others;
  int64_t arena_size = 0;    // elements of scratch the nodes need
  int64_t staging_size = 0;  // elements a batch's gathered operands need (both together)
  // Per group rank, its output buffer as consecutive runs (covering it from element 0).
  std::vector<std::vector<PlanRun>> outputs;
  std::vector<int64_t> output_sizes;
  // Ranks whose outputs are the same values, run for run: output_class[r] is the smallest rank s with
  // outputs[s] == outputs[r]. The evaluator assembles each class once.
  std::vector<int32_t> output_class;

  size_t distinct_outputs() const;
};

// Where element `offset` of `value` (a group rank's input, or a node) lives: the one resolution of
// values to memory, done for every node's operands when the plan is derived and for outputs' runs
// when they are assembled.
PlanPlace place_of(const SchedulePlan& plan, int32_t value, int64_t offset);

// Derives the plan of a schedule the checker accepted (every message matched, chunks in bounds).
SchedulePlan derive_plan(const Schedule& schedule);

// The plan of what a schedule computes, from what running it symbolically yields: `nodes` in the
// order the run made them (operands first, values as PlanNode numbers them: p + index, operands
// put in one order under an op that commutes bitwise, as below), and every rank's output buffer as
// runs, adjacent runs that continue each other merged. derive_plan finishes its run with this; an
// algorithm whose values are known in closed form (closed_form_plan.hpp) gives the same two lists
// without a schedule, and so the same plan.
SchedulePlan plan_from_values(int group_size, int32_t reduce_op, std::vector<PlanNode> nodes,
                              std::vector<std::vector<PlanRun>> outputs, std::vector<int64_t> output_sizes);

// Whether a plan whose nodes are all `length` elements long puts them in depth order (short nodes
// are computed in batches, a depth at a time) rather than keeping the order they were made in. A
// list of nodes made in the order plan_from_values gives them is taken as it is, without a sort.
bool orders_by_depth(int64_t length);

// Whether `reduce_op` gives the same bits with its operands swapped, on every backend: then a
// plan's node lists its operands in one order (the smaller (value, offset) on the left), so that
// ranks combining the same two values in opposite orders share the node.
bool commutes_bitwise(int32_t reduce_op);

}  // namespace tessera::comm
