// How the processes of a save wait for each other: in a world spread over processes, a MAX
// all-reduce over the world (one value per hosted rank) that also tells every process whether
// any failed; in a single process, nothing.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::dcp {

class WorldSync {
 public:
  // The calling thread's world; single_process skips every exchange.
  explicit WorldSync(bool single_process = false);
  // Throws on every process when any process's `failure` is not empty (this process's message,
  // or one saying that another process failed).
  void require_all_ok(const std::string& failure, const char* step);
  // The largest of every process's `value`; no process returns before all have called it.
  int64_t max_over_processes(int64_t value);

 private:
  bool exchange(bool failed);  // whether any process failed
  bool single_;
};

}  // namespace tessera::dcp
