// tessera plugins check FILE: what a plugin author's CI runs. The plugin is loaded and exercised in a
// worker process (this executable again), so a plugin that crashes, hangs or leaks is reported with
// the stage it did it in, and the tool itself survives it (plugin_check/supervisor.hpp).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include "commands.hpp"
#include "plugin_check/check_options.hpp"
#include "plugin_check/report.hpp"
#include "plugin_check/supervisor.hpp"
#include "plugin_check/worker.hpp"
#include "tessera/plugins.hpp"

namespace tessera::cli {
namespace {

constexpr const char* kCheckFooter = R"(Stages, each in the worker process:
  load                load the file and run its init
  backend NAME        the backend conformance suite (as tessera-conformance) against the CPU backend
  collective NAME     every collective the algorithm offers over group sizes 1, 2, 3, 4, 7, 8, 16,
                      counts 0, 1, 5, 1000, float32/float64/int32/int64, every reduce op and roots
                      0 and p-1: its schedule verified, then run in a simulated world and compared
                      with values computed directly
  placement NAME      layouts of dims of 0 to 1000 elements over 1 to 16 shards: every element held
                      by exactly one shard, the full tensor rebuilt
  transport NAME      init as a world of one process and a collective over its ranks (a process
                      cannot send to itself, so no message crosses it)
  unload              unregister it (its finalize runs once nothing made from it is left)
  cycles              --cycles loads and unloads; resident memory growth per cycle above
                      --leak-threshold is a leak
  exit                the worker's exit (static destructors, a transport's finalize)
Verdicts: OK, SKIPPED (cannot run here, with the reason), FAILED (with what was wrong), LEAK,
CRASHED (the signal, e.g. SIGSEGV), HUNG (no progress within --timeout; the worker is killed),
NOT RUN (after a crash or a hang).
Exit status: 0 when every stage is OK or SKIPPED, 1 otherwise.)";

// A file here, else a plugin name ("coll-ring") looked up on the search path, as --load takes it.
std::filesystem::path plugin_file(const std::string& name_or_file) {
  std::error_code error;
  std::filesystem::path file = std::filesystem::exists(name_or_file, error)
                                   ? std::filesystem::path(name_or_file)
                                   : find_plugin(name_or_file, plugin_search_path());
  if (!std::filesystem::is_regular_file(file, error))
    throw PluginError(fmt::format("plugins check: no plugin file '{}' (no such file)", file.string()));
  return std::filesystem::absolute(file);
}

}  // namespace

Command add_plugins_check_command(CLI::App& plugins) {
  auto options = std::make_shared<check::CheckOptions>();
  auto file = std::make_shared<std::string>();
  CLI::App* sub = plugins.add_subcommand(
      "check",
      "Check one plugin file in a worker process: load, conformance of each component, unload, "
      "load/unload cycles for leaks; a crash or a hang is reported with its stage");
  sub->add_option("FILE", *file, "The plugin file (or a plugin name on the search path)")->required();
  sub->add_option("--timeout", options->timeout_s, "Seconds a stage may run before it counts as hung")
      ->capture_default_str()
      ->check(CLI::Range(1, 24 * 3600));
  sub->add_option("--cycles", options->cycles, "Load/unload cycles measured for leaks (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  sub->add_option("--leak-threshold", options->leak_threshold_kib,
                  "Average resident memory growth per cycle, in KiB, above which the cycles are a leak")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  sub->add_option("--placement-arguments", options->placement_arguments,
                  "Arguments to check a placement strategy that takes arguments with (e.g. 4 for C(0, 4)); "
                  "may be repeated")
      ->type_name("TEXT");
  sub->add_flag("--json", options->json, "Print the result as one JSON object");
  // How the supervisor starts the worker: not for people, so not in --help.
  sub->add_option("--worker-fd", options->worker_fd)->group("");
  sub->footer(kCheckFooter);
  return {sub, [options, file] {
            if (options->worker_fd >= 0) {  // this is the worker: the file was resolved already
              options->file = *file;
              return check::run_worker(*options);
            }
            options->file = plugin_file(*file);
            const check::CheckResult result = check::supervise(*options);
            if (options->json)
              check::print_json(result, std::cout);
            else
              check::print_text(result, std::cout);
            return result.passed() ? 0 : 1;
          }};
}

}  // namespace tessera::cli
