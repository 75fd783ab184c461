#include "comm/auto_select.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "comm/components.hpp"
#include "comm/cost_model.hpp"
#include "comm/request_key.hpp"
#include "comm/run_collective.hpp"
#include "comm/tuner.hpp"
#include "log/log.hpp"
#include "tessera/errors.hpp"

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

// The host's cost of one applicable algorithm: its own estimate, or (without a usable one) the model
// of its schedule. Throws Error when the schedule the model needs cannot be built.
TunedCost cost_of(const CollectiveAlgorithm& algorithm, const tessera_collective_request& request) {
  const std::optional<double> own = algorithm.estimate(request);
  return TunedCost{algorithm.name(), own ? *own : modelled_seconds(algorithm, request), !own, false};
}

std::string costs_text(const std::vector<TunedCost>& costs) {
  std::string text;
  for (const TunedCost& c : costs)
    text += fmt::format("{}{} {:.3g} s{}{}", text.empty() ? "" : ", ", c.algorithm, c.seconds,
                        c.modelled ? " (model)" : "", c.vetoed ? " (vetoed)" : "");
  return text;
}

// Lets the tuner in force, if any, reprice or veto `costs`. Returns what it did, for the log line of
// the choice ("" when no tuner took part). A tuner whose answer cannot be used is worked around:
// `costs` stay the host's, with a warning naming the tuner.
std::string tune(const tessera_collective_request& request, int64_t bytes, std::vector<TunedCost>& costs,
                 const std::string& what) {
  const std::shared_ptr<const Tuner> tuner = comm::tuner();
  if (tuner == nullptr || costs.empty()) return {};
  if (std::string problem = tuner->tune(request, bytes, costs); !problem.empty()) {
    observe::logger().warn("{}: {} gave an answer \"auto\" cannot use, so its own costs decide: {}", what,
                           tuner->origin(), problem);
    return {};
  }
  return fmt::format("; after tuner '{}': {}", tuner->name(), costs_text(costs));
}

std::shared_ptr<const CollectiveAlgorithm> choose_now(const tessera_collective_request& request,
                                                      int64_t bytes) {
  const std::string what = fmt::format("collective {} (group size {}, {} bytes)",
                                       collective_name(request.collective), request.group_size, bytes);
  std::vector<std::shared_ptr<const CollectiveAlgorithm>> candidates;
  std::vector<TunedCost> costs;          // costs[i] is candidates[i]'s
  std::vector<std::string> unbuildable;  // "'name' (why)", for the error when nothing builds
  std::string declined;
  for (const std::string& name : comm::algorithm_names()) {  // sorted: ties go to the first
    std::shared_ptr<const CollectiveAlgorithm> algorithm = comm::algorithm(name);
    if (algorithm == nullptr || !algorithm->offers(request.collective)) continue;
    std::string reason;
    try {
      reason = algorithm->check(request);
    } catch (const Error& e) {  // its check threw: one broken plugin must not stop every "auto" call
      observe::logger().warn("{}: auto skips '{}': {}", what, name, e.what());
      unbuildable.push_back(fmt::format("'{}' ({})", name, e.what()));
      continue;
    }
    if (!reason.empty()) {
      declined += fmt::format("{}'{}' ({})", declined.empty() ? "" : ", ", name, reason);
      continue;
    }
    try {
      costs.push_back(cost_of(*algorithm, request));
      candidates.push_back(std::move(algorithm));
    } catch (const Error& e) {  // costing by the model builds the schedule: it cannot run either
      observe::logger().warn("{}: auto skips '{}': its schedule could not be built: {}", what, name,
                             e.what());
      unbuildable.push_back(fmt::format("'{}' ({})", name, e.what()));
    }
  }
  if (candidates.empty() && unbuildable.empty()) {
    observe::logger().info("{}: auto found no applicable algorithm (not applicable: {})", what,
                           declined.empty() ? "none offers it" : declined);
    return nullptr;
  }
  const std::string estimates = costs_text(costs);
  const std::string tuned = tune(request, bytes, costs, what);
  // Cheapest first, vetoed ones last (tried only when every other fails to build); the stable sort
  // keeps the names' order among equal costs.
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (costs[a].vetoed != costs[b].vetoed) return !costs[a].vetoed;
    return costs[a].seconds < costs[b].seconds;
  });
  // The cheapest is the choice only once its schedule builds (and passes the checker): a plugin
  // whose build fails must cost performance, not the call. The schedule stays cached for the run.
  std::shared_ptr<const CollectiveAlgorithm> chosen;
  std::vector<std::string> skipped;  // "'name'", for the log line of the choice
  for (const size_t i : order) {
    try {
      static_cast<void>(cached_schedule(candidates[i]->name(), request));
      chosen = candidates[i];
      if (costs[i].vetoed)  // correctness over the tuner's preference
        observe::logger().warn(
            "{}: auto runs '{}', which the tuner vetoed, because no algorithm it kept has a "
            "schedule that builds",
            what, chosen->name());
      break;
    } catch (const Error& e) {
      observe::logger().warn(
          "{}: auto skips '{}' ({:.3g} s, the cheapest left): its schedule could not be built: "
          "{}; trying the next-cheapest",
          what, candidates[i]->name(), costs[i].seconds, e.what());
      unbuildable.push_back(fmt::format("'{}' ({})", candidates[i]->name(), e.what()));
      skipped.push_back(fmt::format("'{}'", candidates[i]->name()));
    }
  }
  if (chosen == nullptr)
    throw Error(fmt::format("{}: auto found no applicable algorithm whose schedule builds; it tried {}", what,
                            fmt::join(unbuildable, ", ")));
  const std::string fallback =
      skipped.empty() ? ""
                      : fmt::format(" (its schedule builds; skipped: {}, whose schedules do not)",
                                    fmt::join(skipped, ", "));
  observe::logger().info("{}: auto chose '{}'{}; estimates: {}{}{}", what, chosen->name(), fallback,
                         estimates, tuned, declined.empty() ? "" : "; not applicable: " + declined);
  return chosen;
}

}  // namespace

std::shared_ptr<const CollectiveAlgorithm> choose_auto(const tessera_collective_request& request,
                                                       int64_t bytes) {
  const KeyView probe = view_of("", request);
  uint64_t generation = algorithms_generation();
  {
    std::unique_lock lock(choices_mutex);
    if (choices.generation == generation)
      if (auto it = choices.chosen.find(probe); it != choices.chosen.end()) {
        const std::string name = it->second;
        lock.unlock();
        if (auto algorithm = comm::algorithm(name)) return algorithm;
      }
  }
  // Loading a plugin changes the generation, and the first listing of the algorithms loads the
  // ones found on the search path: list them before reading the generation the choice is kept
  // under, or a process's first choice would be kept under a generation already gone (and made
  // again by the next call). Read before choose_now lists them: one loaded after this read
  // changes the generation, so a choice made without it is never kept under the newer one.
  static_cast<void>(comm::algorithm_names());
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
