#include "comm/closed_form_plan.hpp"

#include <utility>
#include <vector>

#include "plugin/registry.hpp"

namespace tessera::comm {
namespace {

// The chain rank `root` of a direct reduction computes, as its symbolic run makes it: input 0 op
// input 1, then that op input 2, and so on (each rank combines in rank order), with the operands
// of an op that commutes bitwise in plan_from_values's order. Returns the value holding the result.
int32_t rank_order_chain(int32_t p, int64_t n, int32_t reduce_op, std::vector<PlanNode>& nodes) {
  if (p == 1) return 0;
  const bool commutes = commutes_bitwise(reduce_op);
  auto add = [&](int32_t left, int32_t right) {
    PlanNode& node = nodes.emplace_back();
    node.left = left;
    node.right = right;
    node.length = n;
    return p + static_cast<int32_t>(nodes.size() - 1);
  };
  int32_t value = add(0, 1);
  // A node's number is p or more, an input's below p: a commuting op puts the input first.
  for (int32_t i = 2; i < p; ++i) value = commutes ? add(i, value) : add(value, i);
  return value;
}

}  // namespace

bool direct_plan_covers(const tessera_collective_request& request) {
  switch (request.collective) {
    case TESSERA_COLL_ALL_REDUCE:
    case TESSERA_COLL_REDUCE:
    case TESSERA_COLL_BROADCAST:
    case TESSERA_COLL_ALL_GATHER:
    case TESSERA_COLL_GATHER:
    case TESSERA_COLL_SCATTER:
    case TESSERA_COLL_ALL_TO_ALL:
      return true;
    default:
      return false;
  }
}

bool has_closed_form_plan(const CollectiveAlgorithm& algorithm, const tessera_collective_request& request) {
  return algorithm.name() == "direct" && algorithm.plugin().info().name == "coll-direct" &&
         plugin::bundled(algorithm.plugin().info().file) && request_problem(request).empty() &&
         direct_plan_covers(request);
}

SchedulePlan direct_plan(const tessera_collective_request& q) {
  const int32_t p = q.group_size;
  const int64_t n = q.count;
  std::vector<PlanNode> nodes;
  std::vector<std::vector<PlanRun>> outputs(static_cast<size_t>(p));
  std::vector<int64_t> output_sizes(static_cast<size_t>(p));
  for (int32_t r = 0; r < p; ++r) output_sizes[static_cast<size_t>(r)] = io_sizes(q, r).second;
  // Runs of no element are never kept: an empty output has no runs.
  auto append = [](std::vector<PlanRun>& runs, int64_t length, int32_t value, int64_t offset) {
    if (length > 0) runs.push_back({length, value, offset});
  };
  const bool reduces = q.collective == TESSERA_COLL_ALL_REDUCE || q.collective == TESSERA_COLL_REDUCE;
  const int32_t result = reduces && n > 0 ? rank_order_chain(p, n, q.reduce_op, nodes) : 0;
  for (int32_t r = 0; r < p; ++r) {
    std::vector<PlanRun>& runs = outputs[static_cast<size_t>(r)];
    const bool root = r == q.root;
    switch (q.collective) {
      case TESSERA_COLL_ALL_REDUCE:
        append(runs, n, result, 0);
        break;
      case TESSERA_COLL_REDUCE:  // the other ranks' outputs are never written
        append(runs, n, root ? result : kUndefined, 0);
        break;
      case TESSERA_COLL_BROADCAST:
        append(runs, n, q.root, 0);
        break;
      case TESSERA_COLL_SCATTER:
        append(runs, n, q.root, int64_t{r} * n);
        break;
      case TESSERA_COLL_GATHER:
        if (!root) {
          append(runs, int64_t{p} * n, kUndefined, 0);
          break;
        }
        [[fallthrough]];
      case TESSERA_COLL_ALL_GATHER:
        for (int32_t i = 0; i < p; ++i) append(runs, n, i, 0);
        break;
      case TESSERA_COLL_ALL_TO_ALL:
        for (int32_t i = 0; i < p; ++i) append(runs, n, i, int64_t{r} * n);
        break;
      default:
        break;
    }
  }
  return plan_from_values(p, q.reduce_op, std::move(nodes), std::move(outputs), std::move(output_sizes));
}

}  // namespace tessera::comm
