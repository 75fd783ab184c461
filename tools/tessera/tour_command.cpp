// tessera tour [--trace FILE]: the main demo. Runs the tutorial's six scenarios (each printed with
// what it computed and, when it differs, what it should be), draws how a few DTensors are sharded,
// and shows the communication everything issued: a CommCounter table and a Perfetto trace.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include <tessera/tessera.hpp>

#include "commands.hpp"
#include "scenarios.hpp"

namespace tessera::cli {
namespace {
namespace fs = std::filesystem;

// Stops the trace if the tour ends by an exception. The normal path calls stop_trace() itself so
// that a failure to write the file is reported; a destructor must not throw.
struct TraceGuard {
  ~TraceGuard() {
    try {
      stop_trace();
    } catch (const std::exception&) {  // the run's own error is the one worth reporting
    }
  }
};

// Runs every tutorial scenario; returns how many did not match.
int run_scenarios() {
  std::cout << "== tutorial scenarios (local tensors: every rank in one process)\n";
  int failures = 0;
  std::string group;
  for (const tutorial::Scenario& scenario : tutorial::all_scenarios()) {
    if (scenario.group != group) std::cout << "\n-- scenario " << (group = scenario.group) << "\n";
    const tutorial::Check result = scenario.run();
    std::cout << (result.ok ? "[ok]   " : "[FAIL] ") << scenario.name << "\n";
    std::cout << "       actual:   " << result.actual << "\n";
    if (!result.ok) std::cout << "       expected: " << result.expected << "\n";
    failures += result.ok ? 0 : 1;
  }
  return failures;
}

// Small DTensors whose layouts the DTensor scenarios use, drawn as rank grids. Each world gets its
// own LocalMode because a mesh must cover exactly the mode's ranks.
void sharding_pictures() {
  std::cout << "\n== sharding pictures (which rank holds which block)\n\n";
  {
    LocalMode mode(4);
    const DeviceMesh line = init_device_mesh("cpu", {4});
    const Tensor t = arange(64).reshape({8, 8}).to(kFloat32);
    std::cout << visualize_sharding(distribute_tensor(t, line, {Shard(0)})) << "\n";
    const DeviceMesh grid = init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
    std::cout << visualize_sharding(distribute_tensor(t, grid, {Shard(0), Shard(1)})) << "\n";
  }
  {
    // 10 rows over 3 ranks: torch.chunk gives 4,4,2; the balanced-shard plugin gives 4,3,3.
    LocalMode mode(3);
    const DeviceMesh line = init_device_mesh("cpu", {3});
    const Tensor t = arange(20).reshape({10, 2}).to(kFloat32);
    const DTensor chunked = distribute_tensor(t, line, {Shard(0)});
    std::cout << visualize_sharding(chunked) << "\n";
    std::cout << visualize_sharding(distribute_tensor(t, line, {BalancedShard(0)})) << "\n";
    // What the simulator really holds: one shard per rank, here of different lengths.
    std::cout << "to_local() of the S(0) one, every rank's shard:\n" << chunked.to_local() << "\n\n";
  }
}

int tour(const std::string& trace_file) {
  // Asking for the backend first reads the configuration (TESSERA_CONFIG, TESSERA_TRACE) now
  // rather than in the middle of the tour, where a configured trace would replace this one.
  std::cout << "== Tessera tour on backend '" << default_backend() << "'\n\n";

  // Started before any work so that an unwritable path fails at once (start_trace checks it).
  start_trace(trace_file);
  TraceGuard guard;
  int failures = 0;
  std::string table;
  {
    const CommCounter counter;
    failures = run_scenarios();
    sharding_pictures();
    table = counter.table();
  }
  stop_trace();

  std::cout << "== communication (every collective above; time estimated over the topology)\n\n"
            << table << "\nplugins used: ";
  const char* separator = "";
  for (const PluginInfo& plugin : loaded_plugins())
    std::cout << std::exchange(separator, ", ") << plugin.name << ' ' << plugin.version;
  std::cout << "\n\n";
  std::error_code error;
  const fs::path shown = fs::absolute(trace_file, error);
  std::cout << "== trace written to " << (error ? fs::path(trace_file) : shown).string()
            << "\n   open it at https://ui.perfetto.dev (one track per rank)\n\n";
  std::cout << (failures == 0 ? "all scenarios match" : std::to_string(failures) + " scenario(s) differ") << "\n";
  return failures == 0 ? 0 : 1;
}

}  // namespace

Command add_tour_command(CLI::App& app) {
  auto trace_file = std::make_shared<std::string>("tessera-trace.json");
  CLI::App* sub = app.add_subcommand(
      "tour", "The main demo: run the tutorial scenarios, draw shardings, count communication, write a trace");
  sub->footer("Exit status 0 when every scenario matches. --trace replaces a TESSERA_TRACE or [trace] file.");
  sub->add_option("--trace", *trace_file, "Chrome/Perfetto trace file to write")
      ->type_name("FILE")
      ->capture_default_str();
  return {sub, [trace_file] { return tour(*trace_file); }};
}

}  // namespace tessera::cli
