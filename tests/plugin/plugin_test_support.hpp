// Shared helpers of the test_plugin suite. Every test case is self-contained: CTest runs each one
// in a process of its own, while running the executable directly runs them all in one process.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace plugin_test {

// libtessera-<name>.so in the directory the test plugins are built into.
inline std::filesystem::path test_plugin(const std::string& name) {
  return std::filesystem::path(TESSERA_TEST_PLUGIN_DIR) / ("libtessera-" + name + ".so");
}
inline std::filesystem::path testdev_file() { return test_plugin("backend-testdev"); }

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline bool has_backend(const std::string& name) {
  const std::vector<std::string> names = tessera::backend_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

inline bool is_loaded(const std::string& plugin_name) {
  const std::vector<tessera::PluginInfo> plugins = tessera::loaded_plugins();
  return std::any_of(plugins.begin(), plugins.end(),
                     [&](const tessera::PluginInfo& p) { return p.name == plugin_name; });
}

// Leaves nothing behind for the next case when all run in one process: the default configuration
// in force and `plugins` unloaded. Declared first in a case, so it runs after the case's ScopedEnvs.
class ResetAndUnload {
 public:
  explicit ResetAndUnload(std::vector<std::string> plugins) : plugins_(std::move(plugins)) {}
  ResetAndUnload(const ResetAndUnload&) = delete;
  ResetAndUnload& operator=(const ResetAndUnload&) = delete;
  ~ResetAndUnload() {
    try {
      tessera::configure(tessera::Config{});
      for (const std::string& plugin : plugins_)
        if (is_loaded(plugin)) tessera::unload_plugin(plugin);
    } catch (const std::exception& e) {
      FAIL_CHECK("cleaning up failed: " << e.what());
    }
  }

 private:
  std::vector<std::string> plugins_;
};

// The message of the PluginError that load_plugin(file) throws; a failed check if it throws none.
inline std::string load_error(const std::filesystem::path& file) {
  try {
    tessera::load_plugin(file.string());
  } catch (const tessera::PluginError& e) {
    return e.what();
  }
  FAIL_CHECK("load_plugin(" << file.string() << ") did not throw PluginError");
  return {};
}

// The message of the `Expected` (a tessera::Error by default) `body` throws; a failed check if it
// throws none.
template <class Expected = tessera::Error, class Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const Expected& e) {
    return e.what();
  }
  FAIL_CHECK("no exception of the expected type was thrown");
  return {};
}

// The host keeps working: the CPU backend still computes.
// Whether a transport of that name is loaded (transport-mpi may be, beside the library).
inline bool has_transport(const std::string& name) {
  const std::vector<std::string> names = tessera::transport_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

inline void check_cpu_still_works() {
  CHECK((tessera::ones({2}) + 1).to_vector<float>() == std::vector<float>{2.f, 2.f});
}

// Sets an environment variable for the lifetime of the object, then restores the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace plugin_test
