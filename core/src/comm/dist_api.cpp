// Algorithm selection and schedule verification in tessera::dist.
#include <algorithm>

#include <fmt/format.h>

#include "comm/run_collective.hpp"
#include "comm/selection.hpp"
#include "plugin/registry.hpp"
#include "tessera/dist.hpp"
#include "tessera/errors.hpp"

namespace tessera::dist {
namespace {

int32_t collective_or_throw(const std::string& collective) {
  const int32_t c = comm::collective_from_name(collective);
  if (c < 0)
    throw Error(fmt::format("unknown collective '{}'; expected one of all_reduce, broadcast, reduce, all_gather, "
                            "reduce_scatter, all_to_all, scatter, gather, barrier",
                            collective));
  return c;
}

}  // namespace

void set_algorithms(const std::string& rules) { comm::set_rules(rules); }
std::string algorithms() { return comm::current_rules(); }
std::vector<std::string> algorithm_names() { return plugin::Registry::instance().algorithm_names(); }

std::string algorithm_for(const std::string& collective, int group_size, int64_t bytes) {
  const tessera_collective_request request =
      comm::make_request(collective_or_throw(collective), group_size, bytes, kInt64, TESSERA_REDUCE_SUM, 0);
  return comm::choose(request, bytes)->name();
}

std::string verify_schedule(const std::string& algorithm, const std::string& collective, int group_size, int64_t count,
                            int root, ReduceOp op, const std::vector<int>& ring_order) {
  tessera_collective_request request =
      comm::make_request(collective_or_throw(collective), group_size, count, kFloat32, comm::schedule_reduce_op(op), root);
  std::vector<int32_t> ring(ring_order.begin(), ring_order.end());
  if (!ring.empty()) {
    std::vector<int32_t> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < group_size; ++i)
      if (sorted.size() != static_cast<size_t>(group_size) || sorted[static_cast<size_t>(i)] != i)
        throw Error(fmt::format("verify_schedule: the ring order must be a permutation of 0..{}", group_size - 1));
    request.ring_order = ring.data();
  }
  auto chosen = plugin::Registry::instance().algorithm(algorithm);
  if (chosen == nullptr) throw Error(fmt::format("verify_schedule: no collective algorithm named '{}' is loaded", algorithm));
  // Past the names, everything is a diagnosis: a malformed request, a plugin that fails or a
  // schedule that is wrong is what this function is for, so it is returned, not thrown.
  try {
    if (std::string problem = comm::request_problem(request); !problem.empty())
      return fmt::format("invalid request {}: {}", comm::describe_request(request), problem);
    if (std::string reason = chosen->check(request); !reason.empty()) return "not applicable: " + reason;
    chosen->build(request);  // verifies
    return {};
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {  // a plugin's own exception type; build() and check() guard the calls, this the rest
    return fmt::format("verifying {} with '{}' threw a non-standard exception", comm::describe_request(request),
                       algorithm);
  }
}

}  // namespace tessera::dist
