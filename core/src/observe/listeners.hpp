// Who observes a world: the comm counters and trace scopes alive on it. Worlds made by a LocalMode
// without an explicit World share their creator's listeners (world/world.hpp says why).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>

#include "tessera/observe.hpp"

namespace tessera::observe {

class TraceRecorder;

struct Listeners {
  Listeners();
  const uint64_t id;  // distinct per Listeners in this process: a trace's process id for them
  std::mutex mutex;   // guards the sets and every counter's state
  std::set<CommCounter::State*> counters;
  std::set<TraceRecorder*> recorders;
  // Read without the lock on every op, so that nobody listening costs two loads.
  std::atomic<int> live_counters{0};
  std::atomic<int> live_recorders{0};
};

}  // namespace tessera::observe
