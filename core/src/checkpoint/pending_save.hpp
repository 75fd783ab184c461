// An async_save that has returned to its caller but is not finished, kept by its world so that the
// next save, async_save or load in that world finishes it first.
//
// In a world of one process the writer thread does the whole save (generation, data file, commit):
// nothing is exchanged. In a world spread over processes the caller's thread agreed on the
// generation before async_save returned; the writer thread only writes this process's data file;
// the commit, which needs to hear from every process, runs on a thread that calls into dcp: the
// caller's, at future.get() or wait(), or at the world's next save, async_save or load, whichever
// comes first. Every exchange of a save thus runs in the caller's order of collectives.
#pragma once

#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "checkpoint/crash_points.hpp"
#include "checkpoint/save_plan.hpp"
#include "checkpoint/save_steps.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/world.hpp"

namespace tessera::dcp {

class PendingSave {
 public:
  // Starts the writer thread. `shared`: the world spans processes and plan.metadata.generation is
  // agreed; the writer writes the data file and the commit waits for finish().
  PendingSave(SavePlan plan, std::string path, SaveOptions options, bool shared);
  // Waits for the writer thread (its destructor would too).
  ~PendingSave();
  PendingSave(const PendingSave&) = delete;
  PendingSave& operator=(const PendingSave&) = delete;

  // Waits for the writer; then, when shared, commits together with the other processes of
  // `world`. Once: later calls return at once. The save's error goes to the result, not to the
  // caller of finish.
  void finish(const World& world);
  // The save's stats or error, set by the writer (one process) or by finish (shared). Once.
  std::future<SaveStats> result() { return promise_.get_future(); }

 private:
  void write_alone();
  void write_shared();

  SavePlan plan_;
  const std::string path_;
  const SaveOptions options_;
  const bool shared_;
  CrashPoints crash_;
  WrittenFile written_;  // shared: the writer's, read by finish() after the writer ended
  std::promise<SaveStats> promise_;
  std::future<void> writer_;
  std::mutex finish_mutex_;
  bool finished_ = false;
};

// Finishes the world's pending async save, if it has one (a collective when the world spans
// processes), and forgets it.
void finish_pending_save(const World& world);
// Makes `pending` the world's pending save; the one before must have been finished.
void keep_pending_save(const World& world, std::shared_ptr<PendingSave> pending);
// Finishes `pending` (and, when it is still the world's pending save, forgets it there).
void finish_save(const World& world, const std::shared_ptr<PendingSave>& pending);

}  // namespace tessera::dcp
