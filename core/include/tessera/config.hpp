// Configuration: a tessera.toml file, overridden by environment variables.
//
//   [plugins]
//   search_path = ["plugins"]        # relative paths are relative to the file
//   load = ["backend-cpu", "./libmy-backend.so"]
//   [backend]
//   default = "cpu"
//   [log]
//   level = "warn"                   # trace, debug, info, warn, error, off
//   [execution]
//   threads = 0                      # threads running ranks in parallel; 0 = one per hardware thread
//   [collectives]
//   algorithms = "all_reduce:ring;*:direct"   # see ts::dist::set_algorithms
//   [topology]
//   preset = "nodes:4"               # fully_connected, ring, torus:RxC, nodes:K (see topology.hpp)
//   [trace]
//   file = "trace.json"              # Chrome/Perfetto trace, written at exit (see observe.hpp)
//
// Environment: TESSERA_CONFIG (a file read at start-up), TESSERA_PLUGIN_PATH, TESSERA_LOG_LEVEL,
// TESSERA_THREADS (overrides [execution] threads), TESSERA_COLL (overrides [collectives] algorithms),
// TESSERA_TRACE (a trace file, as [trace] file).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tessera {

struct Config {
  std::vector<std::filesystem::path> plugin_search_path;
  std::vector<std::string> plugins_to_load;
  std::string default_backend = "cpu";
  std::string log_level = "warn";
  int threads = 0;
  std::string collective_algorithms;  // empty: the built-in defaults
  std::string topology;               // empty: fully connected
  std::filesystem::path trace_file;   // empty: no trace
  std::filesystem::path source;  // the file it was read from, if any

  // Parses a TOML file; errors (ConfigError) name the file, line and key.
  static Config from_file(const std::filesystem::path& file);
  static Config from_string(const std::string& toml, const std::filesystem::path& source_name = "<string>");
};

// Applies a configuration to the running process: search path, log level, loads the listed
// plugins, then sets the default backend.
void configure(const Config& config);

// The number of threads that run the ranks of one op in parallel (0 = one per hardware thread;
// TESSERA_THREADS, when set, wins). Results are bitwise the same for every count.
void set_threads(int threads);
int threads();

}  // namespace tessera
