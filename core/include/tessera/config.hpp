// Configuration: a tessera.toml file, overridden by environment variables.
//
//   [plugins]
//   search_path = ["plugins"]        # relative paths are relative to the file
//   load = ["backend-cpu", "./libmy-backend.so"]
//   allow_override = false           # may a plugin's component flagged TESSERA_COMPONENT_OVERRIDES
//                                    # replace a loaded one of its name (a built-in "ring")?
//   [plugins.coll-hier]              # parameters of the plugin named coll-hier (SDK 1.3), each
//   group_size = 4                   # passed to it as text: strings, integers, floats, booleans
//   [backend]
//   default = "cpu"
//   [log]
//   level = "warn"                   # trace, debug, info, warn, error, off
//   [execution]
//   threads = 0                      # threads running ranks in parallel; 0 = one per hardware thread
//   [collectives]
//   algorithms = "all_reduce:ring;*:direct"   # see ts::dist::set_algorithms
//   tuner = "my-site"                # a tuner plugin (SDK 1.5) repricing the rule "auto"'s
//                                    # candidates: libtessera-tuner-*.so on the search path
//   [topology]
//   preset = "nodes:4"               # fully_connected, ring, torus:RxC, nodes:K (see topology.hpp)
//   [trace]
//   file = "trace.json"              # Chrome/Perfetto trace, written at exit (see observe.hpp)
//   [world]                          # read by ts::init_world() (tessera/world.hpp)
//   transport = "auto"               # auto (mpi when launched by mpirun), local, or a transport name
//   ranks_per_process = 1            # ranks each process hosts; world size = processes x this
//   timeout = "60s"                  # longest wait for a peer: "250ms", "60s", "2m"
//   check_collectives = true         # compare collective fingerprints across processes (default:
//                                    # on in debug builds and under TESSERA_DEBUG=1)
//
// Precedence, for every key: environment variable > configuration (file or code) > built-in default.
//   TESSERA_PLUGIN_PATH  directories searched before [plugins] search_path
//   TESSERA_PLUGIN_ALLOW_OVERRIDE  1 or 0: [plugins] allow_override
//   TESSERA_PLUGIN_PARAMS  "<plugin>.<key>=<value>;...": [plugins.<plugin>] keys, each key winning
//                          over the same key of the file
//   TESSERA_LOG_LEVEL    [log] level
//   TESSERA_THREADS      [execution] threads
//   TESSERA_COLL         [collectives] algorithms
//   TESSERA_TUNER        [collectives] tuner
//   TESSERA_TRACE        [trace] file
//   TESSERA_TRANSPORT    [world] transport
//   TESSERA_RANKS_PER_PROCESS  [world] ranks_per_process
//   TESSERA_TIMEOUT      [world] timeout
//   TESSERA_DEBUG        1: [world] check_collectives = true; 0: false
// TESSERA_CONFIG names a file applied, with the variables above over it, when the library is first
// used; ts::configure applies a configuration the same way later.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

struct Config {
  std::vector<std::filesystem::path> plugin_search_path;
  std::vector<std::string> plugins_to_load;
  bool plugin_allow_override = false;
  // Plugin parameters: plugin name -> key -> value as text. configure() passes each that changed to
  // the plugin (now if loaded, else after its init when it loads); a key no longer set is not passed
  // to plugins loaded later, while a loaded plugin keeps the value it was given.
  std::map<std::string, std::map<std::string, std::string>> plugin_parameters;
  // Where each parameter came from, for error messages: "<plugin>.<key>" -> "file:line" or
  // "TESSERA_PLUGIN_PARAMS"; a parameter without an entry is reported as set by "configuration".
  std::map<std::string, std::string> plugin_parameter_origins;
  std::string default_backend = "cpu";
  std::string log_level = "warn";
  int threads = 0;
  std::string collective_algorithms;  // empty: the built-in defaults
  std::string collective_tuner;       // empty: none ("auto" by its own costs alone)
  std::string topology;               // empty: fully connected
  std::filesystem::path trace_file;   // empty: no trace
  std::string world_transport = "auto";
  int ranks_per_process = 1;
  int64_t world_timeout_ms = 60000;
  std::optional<bool> check_collectives;  // unset: on in debug builds, off otherwise
  std::filesystem::path source;           // the file it was read from, if any

  // Parses a TOML file; errors (ConfigError) name the file, line and key.
  static Config from_file(const std::filesystem::path& file);
  static Config from_string(const std::string& toml, const std::filesystem::path& source_name = "<string>");
  // TESSERA_CONFIG's file when the variable is set (a ConfigError naming it when the file cannot
  // be read), else the defaults. The environment's overrides are not applied: see with_environment.
  static Config from_environment();
};

// `config` with every environment variable that is set put over it (TESSERA_LOG_LEVEL,
// TESSERA_THREADS, TESSERA_COLL, TESSERA_TRACE, TESSERA_PLUGIN_ALLOW_OVERRIDE,
// TESSERA_PLUGIN_PARAMS, ...; TESSERA_PLUGIN_PATH is searched first whatever the
// configuration says). A malformed variable is a ConfigError naming it.
Config with_environment(Config config);

// Applies with_environment(config) to the running process, every key: log level, whether plugins
// may override, plugin parameters (a refused one is a ConfigError naming plugin, key, value and its
// origin), plugin search path and plugins to load, default backend, thread count, topology preset and
// collective rules (empty = left as they are: the built-in defaults unless set before), the tuner (empty =
// none; an unknown name is a ConfigError listing the available tuners), and a trace written at exit (empty =
// tracing left as it is). Errors name the key and where its value came from (file or variable); a plugin that
// cannot be loaded is a PluginError.
void configure(const Config& config);

// The configuration in force: the one configure last applied in full (with the environment's variables
// folded in, as applied), or Config::from_environment() before any. Start from it to change a few
// keys and keep the rest: `auto c = ts::current_config(); c.threads = 2; ts::configure(c);`.
Config current_config();

// Applies Config::from_environment() as configure does, once per process. The first use of the
// library does it; call it to get a bad TESSERA_CONFIG reported at a point of your choosing.
void configure_from_environment();

// Parses a duration as [world] timeout and TESSERA_TIMEOUT take it ("250ms", "60s", "2m"; a bare
// number is seconds) into milliseconds > 0; throws ConfigError naming `where` and the text.
int64_t parse_timeout(const std::string& text, const std::string& where);

// The number of threads that run the ranks of one op in parallel (0 = one per hardware thread;
// TESSERA_THREADS, when set, wins). Results are bitwise the same for every count.
void set_threads(int threads);
int threads();

}  // namespace tessera
