// ts::init_world(): the world of this process, from configuration ([world], TESSERA_*) and the
// launcher. In the api layer because it reads the configuration and loads the transport plugin.
//
// The process world is one per process by nature (MPI is initialised once per process), so it is
// kept here for the life of the process; every other world is an object its users own.
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "api/world_agreement.hpp"
#include "api/world_config.hpp"
#include "plugin/environment.hpp"
#include "plugin/registry.hpp"
#include "tessera/config.hpp"
#include "tessera/errors.hpp"
#include "tessera/topology.hpp"
#include "tessera/world.hpp"
#include "world/process_link.hpp"
#include "world/world.hpp"

namespace tessera {
namespace {

// Set by the launchers Tessera runs under: Open MPI's mpirun, PMIx and the PMI of MPICH/Slurm.
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (plugin::env_value(name) != nullptr) return true;
  return false;
}

bool checks_by_default() {
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

struct ProcessWorld {
  std::mutex mutex;
  Config config = with_environment(Config{});  // as configure() last applied it
  std::shared_ptr<world::WorldState> world;
};

ProcessWorld& process_world() {
  static ProcessWorld the;
  return the;
}

std::shared_ptr<world::WorldState> make_process_world(const Config& config) {
  std::string transport = config.world_transport;
  if (transport == "auto") transport = launched_by_mpi() ? "mpi" : "local";
  const int k = config.ranks_per_process;
  if (transport == "local") return world::make_world(k);
  std::shared_ptr<const plugin::Transport> found = plugin::Registry::instance().transport(transport);
  if (found == nullptr) {
    std::string loaded;
    for (const std::string& name : plugin::Registry::instance().transport_names())
      loaded += (loaded.empty() ? "" : ", ") + name;
    throw Error(fmt::format(
        "init_world: no transport named '{}' is loaded ([world] transport / TESSERA_TRANSPORT); "
        "loaded transports: {}; 'local' runs a simulated world",
        transport, loaded.empty() ? "none (is the transport-" + transport + " plugin installed?)" : loaded));
  }
  auto link = std::make_shared<world::ProcessLink>(found, k, config.world_timeout_ms);
  if (int64_t{link->process_count()} * k > int64_t{1} << 30)
    throw Error(
        fmt::format("init_world: {} processes x {} ranks per process is more ranks than a world can hold",
                    link->process_count(), k));
  const bool checks = config.check_collectives.value_or(checks_by_default());
  // Before anything is computed: every process runs with the same settings, or none goes on.
  api::require_agreement(*link, api::world_settings(config, *link, checks));
  return std::make_shared<world::WorldState>(link, k, checks);
}

}  // namespace

World init_world() {
  configure_from_environment();  // plugins, search path and [world] first: the transport is a plugin
  ProcessWorld& the = process_world();
  std::lock_guard lock(the.mutex);
  if (!the.world) {
    the.world = make_process_world(the.config);
    world::adopt_process_world(the.world.get());
  }
  // The preset's size is checked here, where the world's size is first known, not at the first
  // collective: a program configured for another world fails at its start. The world is kept, so
  // init_world() returns it once a fitting preset is set.
  if (const std::string preset = default_topology_preset(); !preset.empty()) {
    try {
      check_topology_preset(preset, the.world->size());
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("init_world: [topology] preset does not fit this world of {} ranks: {}",
                                    the.world->size(), e.what()));
    }
  }
  return World(the.world);
}

namespace api {

void set_world_config(const Config& config) {
  ProcessWorld& the = process_world();
  std::lock_guard lock(the.mutex);
  if (the.world) {
    const Config& was = the.config;
    const char* changed = config.world_transport != was.world_transport       ? "transport"
                          : config.ranks_per_process != was.ranks_per_process ? "ranks_per_process"
                          : config.world_timeout_ms != was.world_timeout_ms   ? "timeout"
                          : config.check_collectives != was.check_collectives ? "check_collectives"
                                                                              : nullptr;
    if (changed != nullptr)
      throw ConfigError(
          fmt::format("[world] {}: the process world already exists (init_world() was called); its "
                      "keys apply only before that",
                      changed));
  }
  the.config = config;
}

}  // namespace api

}  // namespace tessera
