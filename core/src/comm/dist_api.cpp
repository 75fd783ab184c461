// Algorithm selection and schedule verification in tessera::dist.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "comm/components.hpp"
#include "comm/request_topology.hpp"
#include "comm/run_collective.hpp"
#include "comm/schedule.hpp"
#include "comm/selection.hpp"
#include "tessera/dist.hpp"
#include "tessera/errors.hpp"
#include "world/world.hpp"

namespace tessera::dist {
namespace {

int32_t collective_or_throw(const std::string& collective) {
  const int32_t c = comm::collective_from_name(collective);
  if (c < 0)
    throw Error(
        fmt::format("unknown collective '{}'; expected one of all_reduce, broadcast, reduce, all_gather, "
                    "reduce_scatter, all_to_all, scatter, gather, barrier",
                    collective));
  return c;
}

// Group ranks 0..p-1 placed as a call over world ranks 0..p-1 would be in the calling thread's world:
// its topology and ring order, for requests made outside a call (algorithm_for, verify_schedule).
class GroupPlacement {
 public:
  explicit GroupPlacement(int group_size) : members_(static_cast<size_t>(group_size)) {
    std::iota(members_.begin(), members_.end(), 0);
    world::WorldState& in = world::current();
    ring_ = in.ring_order(std::max(group_size, in.size()), members_, topology_);
    where_ = comm::RequestTopology{&topology_, members_.data(), group_size};
  }
  GroupPlacement(const GroupPlacement&) = delete;
  GroupPlacement& operator=(const GroupPlacement&) = delete;

  // The request must not outlive this object.
  void attach(tessera_collective_request& request, bool ring_too) const {
    if (ring_too) request.ring_order = ring_.empty() ? nullptr : ring_.data();
    comm::attach_topology(request, where_);
  }

 private:
  std::vector<int> members_;
  Topology topology_;
  std::vector<int32_t> ring_;
  comm::RequestTopology where_;
};

}  // namespace

void set_algorithms(const std::string& rules) { comm::set_rules(rules); }
std::string algorithms() { return comm::current_rules(); }
std::vector<std::string> algorithm_names() { return comm::algorithm_names(); }

std::string algorithm_for(const std::string& collective, int group_size, int64_t bytes) {
  const int32_t c = collective_or_throw(collective);
  if (group_size < 1 || group_size > comm::kMaxGroupSize)
    throw Error(
        fmt::format("algorithm_for: group size {} is outside 1..{}", group_size, comm::kMaxGroupSize));
  if (bytes < 0) throw Error(fmt::format("algorithm_for: {} bytes; the size must be non-negative", bytes));
  // int64 elements covering `bytes`, so that estimates ("auto") see the size a call would move.
  tessera_collective_request request =
      comm::make_request(c, group_size, bytes / 8 + (bytes % 8 != 0 ? 1 : 0), kInt64, TESSERA_REDUCE_SUM, 0);
  const GroupPlacement placement(group_size);
  placement.attach(request, true);
  return comm::choose(request, bytes)->name();
}

std::string verify_schedule(const std::string& algorithm, const std::string& collective, int group_size,
                            int64_t count, int root, ReduceOp op, const std::vector<int>& ring_order) {
  tessera_collective_request request = comm::make_request(collective_or_throw(collective), group_size, count,
                                                          kFloat32, comm::schedule_reduce_op(op), root);
  std::vector<int32_t> ring(ring_order.begin(), ring_order.end());
  if (!ring.empty()) {
    std::vector<int32_t> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < group_size; ++i)
      if (sorted.size() != static_cast<size_t>(group_size) || sorted[static_cast<size_t>(i)] != i)
        throw Error(
            fmt::format("verify_schedule: the ring order must be a permutation of 0..{}", group_size - 1));
    request.ring_order = ring.data();
  }
  auto chosen = comm::algorithm(algorithm);
  if (chosen == nullptr)
    throw Error(fmt::format("verify_schedule: no collective algorithm named '{}' is loaded", algorithm));
  // Past the names, everything is a diagnosis: a malformed request, a plugin that fails or a
  // schedule that is wrong is what this function is for, so it is returned, not thrown.
  try {
    if (std::string problem = comm::request_problem(request); !problem.empty())
      return fmt::format("invalid request {}: {}", comm::describe_request(request), problem);
    // Hierarchical algorithms see where the ranks are, as in a call (SDK 1.3); the ring order stays
    // the one given.
    const GroupPlacement placement(group_size);
    placement.attach(request, false);
    if (std::string reason = chosen->check(request); !reason.empty()) return "not applicable: " + reason;
    chosen->build(request);  // verifies
    return {};
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {  // a plugin's own exception type; build() and check() guard the calls, this the rest
    return fmt::format("verifying {} with '{}' threw a non-standard exception",
                       comm::describe_request(request), algorithm);
  }
}

}  // namespace tessera::dist
