// How the processes of a save wait for each other: in a world spread over processes, a MAX
// all-reduce over the world (one value per hosted rank) that also tells every process whether
// any failed; in a single process, nothing. Every exchange is a collective of the world: it runs
// on the thread that calls into dcp, in that thread's order of collectives, never on a writer
// thread (whose messages could cross-match the training step's collectives on the world's link).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/world.hpp"

namespace tessera::dcp {

class WorldSync {
 public:
  // Exchanges over `world`'s processes; none when it has one process.
  explicit WorldSync(const World& world);
  // No exchanges: the save of a world that one process holds.
  static WorldSync alone() { return WorldSync(); }

  // Throws on every process when any process's `failure` is not empty (this process's message,
  // or one saying that another process failed).
  void require_all_ok(const std::string& failure, const char* step);
  // The largest of every process's `value`; no process returns before all have called it.
  int64_t max_over_processes(int64_t value);

 private:
  WorldSync() = default;
  bool exchange(bool failed);   // whether any process failed
  std::optional<World> world_;  // empty: no exchanges
};

}  // namespace tessera::dcp
