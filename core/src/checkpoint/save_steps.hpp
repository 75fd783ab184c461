// The steps of a save, in order, on every process of the world: agree on the generation (every
// process looks at the directory before any writes), write this process's data file (no
// communication: an async save does it on a thread of its own), then commit once every process
// has written (process 0 writes the metadata, the others wait to hear that it did).
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/crash_points.hpp"
#include "checkpoint/save_plan.hpp"
#include "checkpoint/world_sync.hpp"
#include "tessera/checkpoint.hpp"

namespace tessera::dcp {

void check_save_options(const SaveOptions& options);

// Process 0 makes the directory; every process then reads the next generation there and all take
// the largest, which this sets in plan.metadata.
void agree_on_generation(SavePlan& plan, const std::string& path, WorldSync& sync);

// What writing this process's data file gave: its stats, or why it failed (reported to every
// process by the commit, which then commits nothing).
struct WrittenFile {
  SaveStats stats;
  std::string failure;
};
WrittenFile write_own_file(SavePlan& plan, const std::string& path, const SaveOptions& options,
                           CrashPoints& crash);

// Nobody commits unless every process wrote its file; throws on every process when any failed.
void commit_everywhere(SavePlan& plan, const std::string& path, const WrittenFile& written, WorldSync& sync,
                       CrashPoints& crash);

}  // namespace tessera::dcp
