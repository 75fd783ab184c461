// Placement strategies as dtensor looks them up: the plugin registry's placement components, typed.
// dtensor owns that kind: it makes a PlacementStrategy of each placement table the registry
// registers. Every lookup first loads every placement-* plugin on the search path.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dtensor/placement_strategy.hpp"

namespace tessera::dtensor {

// The strategy called `name`, or the one whose text prefix is `prefix`; nullptr when none is.
std::shared_ptr<const PlacementStrategy> placement(const std::string& name);
std::shared_ptr<const PlacementStrategy> placement_by_prefix(const std::string& prefix);
// Every strategy, sorted by name.
std::vector<std::shared_ptr<const PlacementStrategy>> placement_strategies();

}  // namespace tessera::dtensor
