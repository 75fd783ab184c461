// dcp::save and dcp::async_save: plan on the caller's thread, agree on the generation, write this
// process's data file, wait for every process, then the first process writes the metadata (the
// commit) and removes what it no longer names (save_steps.hpp). An async save writes on a thread
// of its own and leaves every exchange between processes to the caller's thread
// (pending_save.hpp).
#include <memory>

#include "checkpoint/in_rank_programs.hpp"
#include "checkpoint/pending_save.hpp"
#include "checkpoint/save_steps.hpp"
#include "tessera/checkpoint.hpp"

namespace tessera::dcp {

SaveStats save(const StateDict& state, const std::string& path, const SaveOptions& options) {
  check_save_options(options);
  if (const world::RunningProgram* program = world::running_program())
    return save_in_rank_program(*program, state, path, options);
  const World world = current_world();
  finish_pending_save(world);
  SavePlan plan = plan_save(state, /*stage=*/false);
  WorldSync sync(world);
  CrashPoints crash;
  agree_on_generation(plan, path, sync);
  const WrittenFile written = write_own_file(plan, path, options, crash);
  commit_everywhere(plan, path, written, sync, crash);
  return written.stats;
}

std::future<SaveStats> async_save(const StateDict& state, const std::string& path,
                                  const SaveOptions& options) {
  check_save_options(options);
  if (const world::RunningProgram* program = world::running_program())
    return async_save_in_rank_program(*program, state, path, options);
  const World world = current_world();
  finish_pending_save(world);
  SavePlan plan = plan_save(state, /*stage=*/true);
  const bool shared = plan.num_processes > 1;
  if (shared) {
    WorldSync sync(world);
    agree_on_generation(plan, path, sync);
  }
  auto pending = std::make_shared<PendingSave>(std::move(plan), path, options, shared);
  keep_pending_save(world, pending);
  std::future<SaveStats> result = pending->result();
  if (!shared) return result;
  // The commit runs where the caller asks for the result (or at the world's next dcp call).
  return std::async(std::launch::deferred, [world, pending, result = std::move(result)]() mutable {
    finish_save(world, pending);
    return result.get();
  });
}

}  // namespace tessera::dcp
