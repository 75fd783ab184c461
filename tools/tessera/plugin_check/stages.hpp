// The stages the worker of `tessera plugins check` runs on a loaded plugin, one per kind of
// component (each file named after its kind), then the load/unload cycles. Each returns what it
// found; an exception escaping one is turned into a failed stage by the worker.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "plugin_check/verdict.hpp"

namespace tessera::cli::check {

// The backend conformance suite (tools/conformance) on backend `name`, against the CPU backend.
StageOutcome check_backend(const std::string& name);
// Every collective the algorithm offers, over many group sizes, counts, dtypes, reduce ops and
// roots: its schedule verified, then run in a simulated world and compared with the oracle.
StageOutcome check_collective(const std::string& name);
// A placement strategy's layouts over many dim sizes and shard counts, through DTensors: every
// element held by exactly one shard, shard sizes adding up, the full tensor rebuilt.
StageOutcome check_placement(const std::string& name, const std::vector<std::string>& arguments);
// A transport as far as its contract allows in a process of its own: the process world made over
// it (its init reports a world of one process), a collective over that world's ranks; its finalize
// runs when the worker exits.
StageOutcome check_transport(const std::string& name, int timeout_s);
// `cycles` loads and unloads of the plugin file; resident memory growth per cycle above
// `threshold_kib` (after the first cycle, which warms caches) is a leak.
StageOutcome check_cycles(const std::filesystem::path& file, int cycles, int64_t threshold_kib);

}  // namespace tessera::cli::check
