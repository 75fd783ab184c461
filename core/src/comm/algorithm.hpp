// A collective-algorithm component as the core uses it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "comm/schedule.hpp"
#include "plugin/loaded_plugin.hpp"

namespace tessera::comm {

class CollectiveAlgorithm {
 public:
  // `table` was validated by plugin::check_collective_algorithm; `owner` keeps it mapped.
  CollectiveAlgorithm(const tessera_collective_algorithm* table,
                      std::shared_ptr<const plugin::LoadedPlugin> owner);

  const std::string& name() const { return name_; }
  const plugin::LoadedPlugin& plugin() const { return *owner_; }
  bool offers(int32_t collective) const { return (table_->collectives >> collective) & 1u; }
  // Empty when the algorithm applies to the request; otherwise the precondition that fails. An
  // exception escaping the plugin's check (or build, below) is an Error naming origin(), the request
  // and the call.
  std::string check(const tessera_collective_request& request) const;
  // The recorded schedule, verified symbolically (checker.hpp); throws Error naming the algorithm,
  // its plugin and file, the request and what is wrong when the plugin fails or the schedule is
  // invalid or computes something other than the collective.
  // keep_empty_steps: keep the steps that move no element (the recorder drops them), for tests.
  Schedule build(const tessera_collective_request& request, bool keep_empty_steps = false) const;
  // The plugin's own estimate of the request's time in seconds (SDK 1.3 `estimate`, for the "auto"
  // rule); nullopt when the algorithm has none (or an SDK 1.2 table) or declines with a non-OK
  // status, and also when the estimate cannot be used: the plugin throws or answers NaN, an
  // infinity or a negative time. The caller then costs the schedule with the host's model. An
  // unusable estimate is a plugin defect, not the user's: it is logged as a warning naming
  // origin(), the request and the value, once per algorithm (a loop of calls would repeat it),
  // and never stops a collective.
  std::optional<double> estimate(const tessera_collective_request& request) const;
  bool has_estimate() const;
  // "collective algorithm 'ring' of plugin 'coll-ring' (/path/libtessera-coll-ring.so)".
  std::string origin() const;

 private:
  const tessera_collective_algorithm* table_;
  std::shared_ptr<const plugin::LoadedPlugin> owner_;
  std::string name_;
  // Whether an unusable estimate was reported already (warned once per algorithm).
  mutable std::atomic<bool> estimate_warned_{false};

  void warn_unusable_estimate(const std::string& problem) const;
};

// Changes whenever the set of algorithms may have changed (one is made: its plugin is loading), a
// plugin's schedules are forgotten (unloaded, a parameter set), the selection rules are set or the
// default topology preset is: what caches of choices compare.
uint64_t algorithms_generation();
void note_algorithms_changed();

}  // namespace tessera::comm
