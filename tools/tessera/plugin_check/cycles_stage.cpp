// The load/unload cycles: a plugin whose init takes memory its finalize does not give back grows the
// process by that much every cycle. Resident memory (/proc/self/statm) is read after the first cycle,
// which warms the loader's and the allocator's caches, and after the last; the average growth per
// cycle in between is compared with the threshold.
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <tessera/errors.hpp>
#include <tessera/plugins.hpp>

#include "commands.hpp"
#include "plugin_check/stages.hpp"

namespace tessera::cli::check {
namespace {

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages))
    throw Error("cannot read the resident memory of the worker from /proc/self/statm");
  return resident_pages * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

void load_and_unload(const std::filesystem::path& file) {
  const PluginInfo info = load_plugin(file.string());
  unload_plugin(info.name);
}

}  // namespace

StageOutcome check_cycles(const std::filesystem::path& file, int cycles, int64_t threshold_kib) {
  StageOutcome outcome;
  load_and_unload(file);
  const int64_t after_first = resident_bytes();
  for (int cycle = 1; cycle < cycles; ++cycle) load_and_unload(file);
  const int64_t after_last = resident_bytes();
  if (cycles < 2) {
    outcome.summary =
        fmt::format("{} load/unload cycle: resident memory {} (two or more cycles measure growth)", cycles,
                    bytes_text(after_first));
    return outcome;
  }
  const int64_t growth = after_last - after_first;
  const int64_t per_cycle = growth / (cycles - 1);
  const int64_t threshold = threshold_kib * 1024;
  outcome.verdict = per_cycle > threshold ? Verdict::leak : Verdict::ok;
  outcome.summary = fmt::format(
      "{} load/unload cycles: resident memory {} after the first, {} after the last: {}{} per "
      "cycle ({} {})",
      cycles, bytes_text(after_first), bytes_text(after_last), growth < 0 ? "-" : "+",
      bytes_text(per_cycle < 0 ? -per_cycle : per_cycle),
      per_cycle > threshold ? "above the threshold of" : "threshold", bytes_text(threshold));
  return outcome;
}

}  // namespace tessera::cli::check
