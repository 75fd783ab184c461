// tessera tour [--trace FILE]: the main demo. Runs the tutorial's six scenarios (each printed with
// what it computed and, when it differs, what it should be), draws how a few DTensors are sharded,
// and shows the communication everything issued: a CommCounter table and, when asked for, a
// Perfetto trace.
//
// Traces: --trace FILE records the tour into FILE (a TraceScope); TESSERA_TRACE or [trace] file,
// when set, records the program's trace, which sees the whole run, into its own file. Both may be
// given; each file gets the complete trace. Without either, no trace is written.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <tessera/tessera.hpp>

#include "commands.hpp"
#include "scenarios.hpp"

namespace tessera::cli {
namespace {
namespace fs = std::filesystem;

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
    const DeviceMesh line = init_device_mesh(tutorial::mesh_device(), {4});
    const Tensor t = arange(64).reshape({8, 8}).to(kFloat32);
    std::cout << visualize_sharding(distribute_tensor(t, line, {Shard(0)})) << "\n";
    const DeviceMesh grid = init_device_mesh(tutorial::mesh_device(), {2, 2}, {"dp", "tp"});
    std::cout << visualize_sharding(distribute_tensor(t, grid, {Shard(0), Shard(1)})) << "\n";
  }
  {
    // 10 rows over 3 ranks: torch.chunk gives 4,4,2; the balanced-shard plugin gives 4,3,3.
    LocalMode mode(3);
    const DeviceMesh line = init_device_mesh(tutorial::mesh_device(), {3});
    const Tensor t = arange(20).reshape({10, 2}).to(kFloat32);
    const DTensor chunked = distribute_tensor(t, line, {Shard(0)});
    std::cout << visualize_sharding(chunked) << "\n";
    std::cout << visualize_sharding(distribute_tensor(t, line, {BalancedShard(0)})) << "\n";
    // What the simulator really holds: one shard per rank, here of different lengths.
    std::cout << "to_local() of the S(0) one, every rank's shard:\n" << chunked.to_local() << "\n\n";
  }
}

std::string shown(const std::string& file) {
  std::error_code error;
  const fs::path absolute = fs::absolute(file, error);
  return (error ? fs::path(file) : absolute).string();
}

int tour(const std::string& trace_file) {
  // Everything that can refuse the run is checked before the first line is printed: main has
  // applied the configuration (and started a configured trace), and the --trace file is opened here
  // (a TraceScope opens it at once).
  const std::string backend = default_backend();
  std::optional<TraceScope> scope;
  if (!trace_file.empty()) scope.emplace(trace_file);

  std::cout << "== Tessera tour on backend '" << backend << "'\n\n";
  int failures = 0;
  std::string table;
  {
    const CommCounter counter;
    failures = run_scenarios();
    sharding_pictures();
    table = counter.table();
  }
  // Written now rather than at exit, so that a failure to write is this command's error.
  if (scope) scope->close();
  const std::string configured = trace_path();
  if (!configured.empty()) stop_trace();

  std::cout << "== communication (every collective above; time estimated over the topology)\n\n"
            << table << "\nplugins used: ";
  const char* separator = "";
  for (const PluginInfo& plugin : loaded_plugins())
    std::cout << std::exchange(separator, ", ") << plugin.name << ' ' << plugin.version;
  std::cout << "\n\n";
  if (scope) std::cout << "== trace written to " << shown(trace_file) << "\n";
  if (!configured.empty())
    std::cout << "== trace (TESSERA_TRACE or [trace] file) written to " << shown(configured) << "\n";
  if (scope || !configured.empty())
    std::cout << "   open it at https://ui.perfetto.dev (one track per rank)\n\n";
  else
    std::cout << "== no trace written (tessera tour --trace FILE records one)\n\n";
  std::cout << (failures == 0 ? "all scenarios match" : std::to_string(failures) + " scenario(s) differ")
            << "\n";
  return failures == 0 ? 0 : 1;
}

}  // namespace

Command add_tour_command(CLI::App& app) {
  auto trace_file = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "tour",
      "The main demo: run the tutorial scenarios, draw shardings, count communication, write a trace");
  sub->footer(
      "Exit status 0 when every scenario matches. No trace is written unless --trace FILE, TESSERA_TRACE or "
      "[trace] file asks for one; when both are given, each file gets the whole trace.");
  sub->add_option("--trace", *trace_file, "Chrome/Perfetto trace file to write")->type_name("FILE");
  return {sub, [trace_file] { return tour(*trace_file); }};
}

}  // namespace tessera::cli
