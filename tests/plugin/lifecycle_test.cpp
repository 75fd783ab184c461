// SDK 1.3 plugin lifecycle: init once per load, after validation and before any component is used;
// finalize once, before the library is unloaded (when the last object made from the plugin is
// gone after unload); an init that refuses or throws rejects the plugin, and then finalize is never
// called. Counted through the call log of libtessera-coll-params.so (plugin_log.hpp).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "plugin_log.hpp"
#include "plugin_test_support.hpp"

using namespace plugin_test;

TEST_CASE(
    "init is called once per load and finalize once at unload, a probe of the loaded plugin calls neither") {
  const PluginLog log;
  const std::filesystem::path file = test_plugin("coll-params");
  tessera::load_plugin(file.string());
  REQUIRE(log.lines().size() == 1);
  CHECK(log.lines()[0].starts_with("init host=tessera "));
  tessera::load_plugin(file.string());  // already loaded: a no-op
  CHECK(tessera::probe_plugin(file).accepted);
  CHECK(log.count("init*") == 1);
  CHECK(log.count("finalize") == 0);

  tessera::unload_plugin("coll-params");
  CHECK(log.lines() == std::vector<std::string>{log.lines()[0], "finalize"});

  // A new load starts it again: a second init and, at the second unload, a second finalize.
  tessera::load_plugin(file.string());
  tessera::unload_plugin("coll-params");
  CHECK(log.count("init*") == 2);
  CHECK(log.count("finalize") == 2);
  CHECK(log.lines().back() == "finalize");
}

TEST_CASE("an init that refuses rejects the plugin with its message, and finalize is not called") {
  const PluginLog log;
  const std::filesystem::path file = test_plugin("bad-init-refuses");
  const std::string message = load_error(file);
  CAPTURE(message);
  CHECK(contains(message, "plugin '" + file.string() + "' rejected: its init refused, status 2"));
  CHECK(contains(message, "bad-init-refuses: no accelerator in this machine"));
  CHECK_FALSE(is_loaded("bad-init-refuses"));
  CHECK(log.lines().empty());  // neither init's record (it threw first) nor finalize
  check_cpu_still_works();
}

TEST_CASE("an exception escaping init is caught: the plugin is rejected with its text, never finalized") {
  // Its finalize aborts the process: reaching the checks below means it was not called.
  const std::filesystem::path file = test_plugin("bad-init-throws");
  const std::string message = load_error(file);
  CAPTURE(message);
  CHECK(contains(message, "plugin '" + file.string() +
                              "' rejected: init threw: "
                              "bad-init-throws: the device could not be opened"));
  CHECK_FALSE(is_loaded("bad-init-throws"));
  CHECK_FALSE(has_backend("bad-init-throws"));
  check_cpu_still_works();
}

TEST_CASE("a plugin rejected for a clash is neither initialised nor finalized") {
  const PluginLog log;
  tessera::load_plugin(test_plugin("coll-params").string());
  CHECK(log.count("init*") == 1);
  // The same plugin under another file name: its plugin name (and its algorithm) clash, so it is
  // never started.
  const std::filesystem::path copy = std::filesystem::temp_directory_path() /
                                     ("libtessera-coll-params-copy-" + std::to_string(::getpid()) + ".so");
  std::filesystem::copy_file(test_plugin("coll-params"), copy,
                             std::filesystem::copy_options::overwrite_existing);
  const std::string message = load_error(copy);
  std::filesystem::remove(copy);
  CHECK(contains(message, "its plugin name 'coll-params' is already taken by " +
                              std::filesystem::weakly_canonical(test_plugin("coll-params")).string()));
  CHECK(log.count("init*") == 1);
  CHECK(log.count("finalize") == 0);
  tessera::unload_plugin("coll-params");
  CHECK(log.count("finalize") == 1);
}

TEST_CASE("a probe of a plugin not loaded runs its init and finalize, and registers nothing") {
  const PluginLog log;
  const std::filesystem::path file = test_plugin("coll-params");
  const tessera::PluginProbe probe = tessera::probe_plugin(file);
  CHECK(probe.accepted);
  REQUIRE(log.lines().size() == 2);
  CHECK(log.lines()[0].starts_with("init host=tessera "));
  CHECK(log.lines()[1] == "finalize");
  CHECK_FALSE(is_loaded("coll-params"));
}

TEST_CASE("a probe reports an init that refuses as the reason the plugin cannot be used here") {
  const std::filesystem::path file = test_plugin("bad-init-refuses");
  const tessera::PluginProbe probe = tessera::probe_plugin(file);
  CHECK_FALSE(probe.accepted);
  CHECK(contains(probe.reason, "its init refused, status 2"));
  CHECK(contains(probe.reason, "bad-init-refuses: no accelerator in this machine"));
  CHECK_FALSE(is_loaded("bad-init-refuses"));
  check_cpu_still_works();
}

namespace {

// Runs `body` in a child process that then exits through std::exit (running the exit handlers, as
// returning from main does); the child's exit status, 3 when `body` threw.
template <class Body>
int exit_status_of_child(Body&& body) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      body();
    } catch (...) {
      std::_Exit(3);
    }
    std::exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("at process exit every loaded plugin is finalized, the last loaded first") {
  const PluginLog log;
  // The child loads two plugins and exits without unloading them; the log is read here.
  CHECK(exit_status_of_child([] {
          tessera::load_plugin(test_plugin("coll-params").string());
          tessera::load_plugin(test_plugin("params-second").string());
        }) == 0);
  const std::vector<std::string> lines = log.lines();
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].starts_with("init host="));
  CHECK(lines[1].starts_with("second init host="));
  CHECK(lines[2] == "second finalize");
  CHECK(lines[3] == "finalize");
}

TEST_CASE("a plugin unloaded before exit is not finalized again at exit") {
  const PluginLog log;
  CHECK(exit_status_of_child([] {
          tessera::load_plugin(test_plugin("coll-params").string());
          tessera::unload_plugin("coll-params");
        }) == 0);
  CHECK(log.count("init*") == 1);
  CHECK(log.count("finalize") == 1);
}
