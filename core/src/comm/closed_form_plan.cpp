#include "comm/closed_form_plan.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/closed_form_chains.hpp"
#include "plugin/registry.hpp"

namespace tessera::comm {
namespace {

bool gathers_or_scatters_reduced(const tessera_collective_request& request) {
  return request.collective == TESSERA_COLL_ALL_GATHER || request.collective == TESSERA_COLL_REDUCE_SCATTER;
}

bool gathers_or_exchanges(const tessera_collective_request& request) {
  return request.collective == TESSERA_COLL_ALL_GATHER || request.collective == TESSERA_COLL_ALL_TO_ALL;
}

// The bundled algorithms whose plans are known in closed form, and for which collectives.
struct TrustedAlgorithm {
  std::string_view plugin;
  std::string_view algorithm;
  bool (*covers)(const tessera_collective_request&);
};

constexpr std::array<TrustedAlgorithm, 4> kTrusted{{
    {"coll-direct", "direct", &direct_plan_covers},
    {"coll-ring", "ring", &gathers_or_scatters_reduced},
    {"coll-rd", "rd", &gathers_or_scatters_reduced},
    {"coll-bruck", "bruck", &gathers_or_exchanges},
}};

// The plan of outputs whose values are known: per rank, its output as runs, none of them empty
// (derive_plan never keeps a run of no element).
SchedulePlan plan_of_outputs(const tessera_collective_request& q, NodeList nodes,
                             std::vector<std::vector<PlanRun>> outputs) {
  const int32_t p = q.group_size;
  std::vector<int64_t> output_sizes(static_cast<size_t>(p));
  for (int32_t r = 0; r < p; ++r) output_sizes[static_cast<size_t>(r)] = io_sizes(q, r).second;
  return plan_from_values(p, q.reduce_op, nodes.take(), std::move(outputs), std::move(output_sizes));
}

// The ring the request asks for, as the ring plugin reads it: the host's order when it gives one,
// else the ranks in order.
std::vector<int32_t> ring_of(const tessera_collective_request& q) {
  const bool given = q.struct_size >= offsetof(tessera_collective_request, ring_order) + sizeof(void*) &&
                     q.ring_order != nullptr;
  std::vector<int32_t> ring(static_cast<size_t>(q.group_size));
  for (int32_t k = 0; k < q.group_size; ++k) ring[static_cast<size_t>(k)] = given ? q.ring_order[k] : k;
  return ring;
}

// The plan of a ring or recursive-halving reduce_scatter: a single rank (or no element) copies its
// input, as direct does.
SchedulePlan reduce_scatter_plan(std::string_view algorithm, const tessera_collective_request& q) {
  if (q.group_size == 1 || q.count == 0) return direct_plan(q);
  NodeList nodes(q.group_size, q.reduce_op);
  std::vector<std::vector<PlanRun>> outputs;
  const std::vector<ValueAt> results = algorithm == "ring"
                                           ? ring_reduce_scatter_chains(ring_of(q), q.count, nodes)
                                           : halving_reduce_scatter_chains(q.group_size, q.count, nodes);
  for (const ValueAt& result : results) outputs.push_back({{q.count, result.value, result.offset}});
  return plan_of_outputs(q, std::move(nodes), std::move(outputs));
}

}  // namespace

bool direct_plan_covers(const tessera_collective_request& request) {
  switch (request.collective) {
    case TESSERA_COLL_ALL_REDUCE:
    case TESSERA_COLL_REDUCE:
    case TESSERA_COLL_BROADCAST:
    case TESSERA_COLL_ALL_GATHER:
    case TESSERA_COLL_REDUCE_SCATTER:
    case TESSERA_COLL_GATHER:
    case TESSERA_COLL_SCATTER:
    case TESSERA_COLL_ALL_TO_ALL:
      return true;
    default:
      return false;
  }
}

bool has_closed_form_plan(const CollectiveAlgorithm& algorithm, const tessera_collective_request& request) {
  const auto trusted = std::find_if(kTrusted.begin(), kTrusted.end(), [&](const TrustedAlgorithm& t) {
    return algorithm.name() == t.algorithm && algorithm.plugin().info().name == t.plugin;
  });
  // The algorithm's own check too: a request it rejects (rd over a group that is not a power of
  // two) must fail as its build would, not be answered by the definition.
  return trusted != kTrusted.end() && plugin::bundled(algorithm.plugin().info().file) &&
         request_problem(request).empty() && trusted->covers(request) && algorithm.check(request).empty();
}

SchedulePlan closed_form_plan(std::string_view algorithm, const tessera_collective_request& request) {
  if ((algorithm == "ring" || algorithm == "rd") && request.collective == TESSERA_COLL_REDUCE_SCATTER)
    return reduce_scatter_plan(algorithm, request);
  return direct_plan(request);
}

SchedulePlan direct_plan(const tessera_collective_request& q) {
  const int32_t p = q.group_size;
  const int64_t n = q.count;
  NodeList nodes(p, q.reduce_op);
  std::vector<std::vector<PlanRun>> outputs(static_cast<size_t>(p));
  const bool reduces = q.collective == TESSERA_COLL_ALL_REDUCE || q.collective == TESSERA_COLL_REDUCE;
  const ValueAt result = reduces && n > 0 ? rank_order_chain(p, n, 0, nodes) : ValueAt{0, 0};
  const std::vector<ValueAt> scattered = q.collective == TESSERA_COLL_REDUCE_SCATTER && n > 0
                                             ? direct_reduce_scatter_chains(p, n, nodes)
                                             : std::vector<ValueAt>();
  // Runs of no element are never kept: an empty output has no runs.
  auto append = [](std::vector<PlanRun>& runs, int64_t length, int32_t value, int64_t offset) {
    if (length > 0) runs.push_back({length, value, offset});
  };
  for (int32_t r = 0; r < p; ++r) {
    std::vector<PlanRun>& runs = outputs[static_cast<size_t>(r)];
    const bool root = r == q.root;
    switch (q.collective) {
      case TESSERA_COLL_ALL_REDUCE:
        append(runs, n, result.value, result.offset);
        break;
      case TESSERA_COLL_REDUCE:  // the other ranks' outputs are never written
        append(runs, n, root ? result.value : kUndefined, root ? result.offset : 0);
        break;
      case TESSERA_COLL_REDUCE_SCATTER:
        if (n > 0)
          append(runs, n, scattered[static_cast<size_t>(r)].value, scattered[static_cast<size_t>(r)].offset);
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
  return plan_of_outputs(q, std::move(nodes), std::move(outputs));
}

}  // namespace tessera::comm
