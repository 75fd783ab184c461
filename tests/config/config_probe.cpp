// tessera_config_probe: prints what the configuration in force does, observed through its effects
// rather than read back from the parsed file. tests/config/CMakeLists.txt runs it in fresh processes
// with TESSERA_CONFIG and the environment variables set as a user sets them, and matches the output.
//
//   threads: N                       the rank pool's real size
//   plugins: NAME, ...               the plugins actually loaded
//   default backend: NAME; a new tensor is on NAME
//   COLLECTIVE: ALGORITHM            the algorithm a counted call over 8 ranks actually used (sorted)
//   topology: NAME; estimate vs fully connected: same|different
//
// With `--world` it prints only the world init_world() makes ([world] keys, TESSERA_TRANSPORT,
// TESSERA_RANKS_PER_PROCESS):
//   world: N rank(s) on P process(es), transport T; hosted ranks R
//
// With `--topology-first PRESET` the probe calls set_default_topology(PRESET) before anything else
// uses the library: the program's own call must outlive the start-up configuration.
//
// Log lines appear on stderr as the configured level lets them; a configured trace is written at
// exit. Any error is printed as "error: ..." with exit status 1.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

constexpr int kRanks = 8;
constexpr int64_t kElements = 4096;  // 16 KiB of float32 per rank

// One all_reduce and one all_gather over kRanks ranks, counted; on cpu whatever the default backend.
std::vector<ts::CommCounter::Entry> run_collectives(double& seconds) {
  ts::LocalMode mode(kRanks);
  const ts::CommCounter counter;
  ts::Tensor x = ts::ones({kElements}, ts::TensorOptions().backend("cpu"));
  ts::dist::all_reduce(x);
  ts::Tensor gathered = ts::zeros({kRanks * kElements}, ts::TensorOptions().backend("cpu"));
  ts::dist::all_gather_into_tensor(gathered, x);
  seconds = counter.seconds();
  return counter.entries();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 2 && std::string(argv[1]) == "--world") {
      const ts::World world = ts::init_world();
      ts::LocalMode mode(world);  // the mode's ranks are the world's hosted ranks
      std::cout << "world: " << world.size() << " rank(s) on " << world.num_processes()
                << " process(es), transport " << world.transport() << "; hosted ranks "
                << mode.ranks().to_string() << '\n';
      return 0;
    }
    if (argc == 3 && std::string(argv[1]) == "--topology-first") ts::set_default_topology(argv[2]);
    ts::configure_from_environment();
    std::cout << "threads: " << ts::threads() << '\n';

    std::vector<std::string> plugins;
    for (const ts::PluginInfo& info : ts::loaded_plugins()) plugins.push_back(info.name);
    std::cout << "plugins: " << fmt::format("{}", fmt::join(plugins, ", ")) << '\n';

    const ts::Tensor made = ts::full({2}, 1.0f);
    std::cout << "default backend: " << ts::default_backend() << "; a new tensor is on " << made.backend()
              << '\n';

    double configured_seconds = 0;
    for (const ts::CommCounter::Entry& entry : run_collectives(configured_seconds))
      std::cout << entry.collective << ": " << entry.algorithm << '\n';

    // The same calls with the default topology put back to fully connected, in a new world (a
    // world keeps the topology it was made with): a configured topology must change the estimate.
    const std::string preset = ts::default_topology_preset();
    ts::set_default_topology("");
    double fully_connected_seconds = 0;
    (void)run_collectives(fully_connected_seconds);
    ts::set_default_topology(preset);
    std::cout << "topology: " << ts::default_topology(kRanks).name() << "; estimate vs fully connected: "
              << (configured_seconds == fully_connected_seconds ? "same" : "different") << '\n';
    return 0;
  } catch (const std::exception& e) {
    std::cout << "error: " << e.what() << '\n';
    return 1;
  }
}
