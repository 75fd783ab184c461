// The options of `tessera plugins check`, shared by the supervisor (which passes them on) and the
// worker (which runs the stages).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tessera::cli::check {

// The default leak threshold, in KiB per cycle. Under AddressSanitizer (a build of the tool made
// with it) every load keeps some runtime metadata for the module (its globals and their shadow) that
// dlclose does not return, about 70 to 140 KiB a cycle even for a plugin that leaks nothing; the
// default is raised above that, still far below a real leak of a buffer per load.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr int64_t kDefaultLeakThresholdKib = 1024;
#else
inline constexpr int64_t kDefaultLeakThresholdKib = 64;
#endif

struct CheckOptions {
  std::filesystem::path file;  // the plugin to check
  int timeout_s = 120;         // the longest one stage may run before the worker is killed as hung
  int cycles = 20;             // load/unload cycles measured for leaks (0: none)
  int64_t leak_threshold_kib = kDefaultLeakThresholdKib;  // average resident growth per cycle called a leak
  std::vector<std::string> placement_arguments;           // tried on placement strategies that take arguments
  bool json = false;
  int worker_fd = -1;  // set only in the worker: where it writes its messages
};

// The arguments that run the worker for `options` (after the program's own path).
std::vector<std::string> worker_arguments(const CheckOptions& options, int worker_fd);

}  // namespace tessera::cli::check
