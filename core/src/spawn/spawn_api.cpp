// ts::spawn and ts::yield_rank (tessera/spawn.hpp).
#include <fmt/format.h>

#include "spawn/scheduler.hpp"
#include "tessera/errors.hpp"
#include "tessera/spawn.hpp"
#include "world/world.hpp"

namespace tessera {

void spawn(int n, const std::function<void(int rank)>& program, const SpawnOptions& options) {
  if (n < 1) throw Error(fmt::format("ts::spawn: {} rank(s); a spawned world needs at least 1", n));
  if (!program) throw Error("ts::spawn: the program is empty (a default-constructed std::function)");
  constexpr size_t kSmallestStack = 16 * 1024;  // below this not even the scheduler's switch fits
  if (options.stack_bytes < kSmallestStack)
    throw Error(fmt::format("ts::spawn: a stack of {} bytes per rank is too small; give at least {}",
                            options.stack_bytes, kSmallestStack));
  if (spawned::Scheduler* outer = spawned::scheduler_here())
    throw Error(
        fmt::format("ts::spawn cannot be called inside a rank's program (rank {} of a spawned world of {}); "
                    "every rank already is one process of the world: spawn worlds one after another or "
                    "on threads of their own",
                    outer->running_rank(), outer->size()));
  // In a world spread over processes (init_world() with a transport) the spawn is that world's:
  // every process calls spawn, and each runs the ranks it hosts (across_processes.cpp).
  const world::WorldState& caller = world::current();
  if (caller.distributed() && n != caller.size())
    throw Error(
        fmt::format("ts::spawn({}): the world spans {} processes with {} rank(s) in all, and a spawn across "
                    "processes runs the world's ranks; call ts::spawn({}) on every process",
                    n, caller.process_count(), caller.size(), caller.size()));
  spawned::Scheduler scheduler(n, program, options, caller.distributed() ? &caller : nullptr);
  scheduler.run();
}

void yield_rank() {
  if (spawned::Scheduler* scheduler = spawned::scheduler_here()) scheduler->yield_now();
}

}  // namespace tessera
