#include "comm/auto_select.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "comm/cost_model.hpp"
#include "comm/request_key.hpp"
#include "comm/run_collective.hpp"
#include "log/log.hpp"
#include "plugin/registry.hpp"

namespace tessera::comm {
namespace {

// The choices made, by request key (the algorithm field empty), valid for one generation.
struct Choices {
  uint64_t generation = 0;
  std::map<CacheKey, std::string, KeyLess> chosen;
};
std::mutex choices_mutex;
Choices choices;
constexpr size_t kChoicesKept = 4096;

// The host's model of the algorithm's schedule (built, verified and cached as for a run).
double modelled_seconds(const CollectiveAlgorithm& algorithm, const tessera_collective_request& request) {
  const std::shared_ptr<const Schedule> schedule = cached_schedule(algorithm.name(), request);
  const size_t itemsize = (static_cast<size_t>(request.dtype.bits) * request.dtype.lanes + 7) / 8;
  if (const RequestTopology* where = topology_of(request)) {
    const std::vector<int> members(where->members, where->members + where->size);
    return estimate(*schedule, members, *where->topology, itemsize).seconds;
  }
  // A request without a topology (verification, an older caller): the default, fully connected.
  std::vector<int> members(static_cast<size_t>(request.group_size));
  std::iota(members.begin(), members.end(), 0);
  return estimate(*schedule, members, Topology::fully_connected(request.group_size), itemsize).seconds;
}

struct Costed {
  std::shared_ptr<const CollectiveAlgorithm> algorithm;
  double seconds;
  bool modelled;  // by the host's cost model rather than the algorithm's own estimate
};

std::shared_ptr<const CollectiveAlgorithm> choose_now(const tessera_collective_request& request, int64_t bytes) {
  auto& registry = plugin::Registry::instance();
  std::vector<Costed> costed;
  std::string declined;
  for (const std::string& name : registry.algorithm_names()) {  // sorted: ties go to the first
    std::shared_ptr<const CollectiveAlgorithm> algorithm = registry.algorithm(name);
    if (algorithm == nullptr || !algorithm->offers(request.collective)) continue;
    if (std::string reason = algorithm->check(request); !reason.empty()) {
      declined += fmt::format("{}'{}' ({})", declined.empty() ? "" : ", ", name, reason);
      continue;
    }
    const std::optional<double> own = algorithm->estimate(request);
    costed.push_back({algorithm, own ? *own : modelled_seconds(*algorithm, request), !own});
  }
  const Costed* best = nullptr;
  std::string estimates;
  for (const Costed& c : costed) {
    if (best == nullptr || c.seconds < best->seconds) best = &c;
    estimates += fmt::format("{}{} {:.3g} s{}", estimates.empty() ? "" : ", ", c.algorithm->name(), c.seconds,
                             c.modelled ? " (model)" : "");
  }
  const std::string what = fmt::format("collective {} (group size {}, {} bytes)", collective_name(request.collective),
                                        request.group_size, bytes);
  if (best == nullptr) {
    observe::logger().info("{}: auto found no applicable algorithm (not applicable: {})", what,
                           declined.empty() ? "none offers it" : declined);
    return nullptr;
  }
  observe::logger().info("{}: auto chose '{}'; estimates: {}{}", what, best->algorithm->name(), estimates,
                         declined.empty() ? "" : "; not applicable: " + declined);
  return best->algorithm;
}

}  // namespace

std::shared_ptr<const CollectiveAlgorithm> choose_auto(const tessera_collective_request& request, int64_t bytes) {
  auto& registry = plugin::Registry::instance();
  const KeyView probe = view_of("", request);
  uint64_t generation = algorithms_generation();
  {
    std::unique_lock lock(choices_mutex);
    if (choices.generation == generation)
      if (auto it = choices.chosen.find(probe); it != choices.chosen.end()) {
        const std::string name = it->second;
        lock.unlock();
        if (auto algorithm = registry.algorithm(name)) return algorithm;
      }
  }
  // Loading a plugin changes the generation, and the first listing of the algorithms loads the
  // ones found on the search path: list them before reading the generation the choice is kept
  // under, or a process's first choice would be kept under a generation already gone (and made
  // again by the next call). Read before choose_now lists them: one loaded after this read
  // changes the generation, so a choice made without it is never kept under the newer one.
  static_cast<void>(registry.algorithm_names());
  generation = algorithms_generation();
  std::shared_ptr<const CollectiveAlgorithm> chosen = choose_now(request, bytes);
  if (chosen == nullptr) return nullptr;  // not remembered: the caller falls back (and logs why)
  std::lock_guard lock(choices_mutex);
  if (generation < choices.generation) return chosen;  // already stale
  if (generation > choices.generation || choices.chosen.size() >= kChoicesKept) {
    choices.chosen.clear();
    choices.generation = generation;
  }
  choices.chosen.insert_or_assign(CacheKey(probe), chosen->name());
  return chosen;
}

}  // namespace tessera::comm
