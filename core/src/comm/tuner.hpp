// A tuner component (SDK 1.5, tuner.h) as the core uses it: given the costs "auto" found for the
// applicable algorithms of a call, the tuner may reprice or veto them. What it answers is checked
// before use, and a tuner that fails is worked around, never fatal: selection then goes on with the
// host's own costs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugin/loaded_plugin.hpp"
#include "tessera/sdk/collective.h"
#include "tessera/sdk/tuner.h"

namespace tessera::comm {

// One row of the cost table: an applicable algorithm and what it costs.
struct TunedCost {
  std::string algorithm;
  double seconds = 0;
  bool modelled = false;  // the host's model of its schedule, not the algorithm's own estimate
  bool vetoed = false;    // by the tuner
};

class Tuner {
 public:
  // `table` was validated by plugin::check_tuner; `owner` keeps it mapped.
  Tuner(const tessera_tuner* table, std::shared_ptr<const plugin::LoadedPlugin> owner);

  const std::string& name() const { return name_; }
  const plugin::LoadedPlugin& plugin() const { return *owner_; }
  // "tuner 'prefer' of plugin 'tuner-prefer' (/path/libtessera-tuner-prefer.so)".
  std::string origin() const;

  // Asks the tuner about `costs` (not empty) for `request`, a call of `bytes` per rank. Returns
  // empty when its answer was taken (`costs` then hold its prices and vetoes); otherwise `costs` are
  // unchanged and the text says why the answer was ignored: an error status with the tuner's
  // message, an exception escaping it, a price that is not a finite number of seconds >= 0 (naming
  // the algorithm and the value), or every entry vetoed.
  std::string tune(const tessera_collective_request& request, int64_t bytes,
                   std::vector<TunedCost>& costs) const;

 private:
  const tessera_tuner* table_;
  std::shared_ptr<const plugin::LoadedPlugin> owner_;
  std::string name_;
};

// The tuner's view of `request` (a call of `bytes` per rank): its topology summarised
// (tuner.h: nodes, the slowest path from group rank 0), all zero for a request without topology.
// `request` must outlive the result, which points to it.
tessera_tuner_request tuner_request(const tessera_collective_request& request, int64_t bytes);

}  // namespace tessera::comm
