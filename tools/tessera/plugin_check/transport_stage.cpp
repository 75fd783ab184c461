// The transport stage. The transport contract (sdk/include/tessera/sdk/transport.h) forbids a send to
// the process itself, so a process alone can check only this much: its init through the process
// world (init_world with [world] transport naming it), which must report a world of exactly this one
// process, and a collective over that world's ranks (all in this process, so no message crosses the
// transport). Its finalize runs when the process world ends, at the worker's exit, which the
// supervisor watches as the stage "exit".
#include <fmt/format.h>

#include <string>
#include <tessera/config.hpp>
#include <tessera/dist.hpp>
#include <tessera/factories.hpp>
#include <tessera/local.hpp>
#include <tessera/world.hpp>

#include "plugin_check/stages.hpp"

namespace tessera::cli::check {
namespace {

constexpr int kRanksPerProcess = 2;

}  // namespace

StageOutcome check_transport(const std::string& name, int timeout_s) {
  StageOutcome outcome;
  Config config = current_config();
  config.world_transport = name;
  config.ranks_per_process = kRanksPerProcess;
  config.world_timeout_ms = int64_t{timeout_s} * 1000;
  config.check_collectives = true;
  configure(config);
  const World world = init_world();
  if (world.transport() != name) {
    outcome.verdict = Verdict::failed;
    outcome.summary = fmt::format(
        "the process world runs over transport '{}', not '{}' (was another transport's "
        "world made first?)",
        world.transport(), name);
    return outcome;
  }
  if (world.num_processes() != 1 || world.process_index() != 0) {
    outcome.verdict = Verdict::failed;
    outcome.summary =
        fmt::format("its init reports process {} of {}, but the worker runs alone: expected process 0 of 1",
                    world.process_index(), world.num_processes());
    return outcome;
  }
  // Rank r contributes r + 1 to every element: the sum over the world is 1 + 2 + ... + size.
  const LocalMode mode(world);
  Tensor t = rank_map([](int rank) { return full({4}, rank + 1, TensorOptions(kInt64)); });
  dist::all_reduce(t);
  const int64_t expected = int64_t{world.size()} * (world.size() + 1) / 2;
  for (int rank = 0; rank < world.size(); ++rank)
    for (int64_t value : t.shards().at(rank).to_vector<int64_t>())
      if (value != expected) {
        outcome.verdict = Verdict::failed;
        outcome.summary = fmt::format("all_reduce over the world's {} ranks gave {} on rank {}, expected {}",
                                      world.size(), value, rank, expected);
        return outcome;
      }
  outcome.summary = fmt::format(
      "init: process 0 of 1; all_reduce over the world's {} ranks right; a process cannot "
      "send to itself, so no message crossed it; its finalize runs at exit",
      world.size());
  return outcome;
}

}  // namespace tessera::cli::check
