// Collective algorithms and tuners as comm looks them up: the plugin registry's components of those
// kinds, typed. comm owns both kinds: it makes a CollectiveAlgorithm or a Tuner of each table of
// theirs the registry registers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/algorithm.hpp"
#include "comm/tuner.hpp"

namespace tessera::comm {

// The collective algorithm called `name`; nullptr when none provides it. The first lookup loads
// every coll-* plugin on the search path.
std::shared_ptr<const CollectiveAlgorithm> algorithm(const std::string& name);
// The names of every collective algorithm, sorted.
std::vector<std::string> algorithm_names();
// The tuner in force, or nullptr when none is set or its plugin has been unloaded since.
std::shared_ptr<const Tuner> tuner();

}  // namespace tessera::comm
