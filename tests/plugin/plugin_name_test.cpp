// A plugin name is unique among loaded plugins: it keys the plugin's configuration parameters
// ([plugins.<name>]) and unload_plugin. libtessera-bad-same-plugin-name.so is a valid plugin whose
// name is coll-params' and whose algorithm ("params-twin-direct") clashes with nothing, so its name
// is the only reason to refuse it.
#include <filesystem>
#include <string>

#include "plugin_log.hpp"
#include "plugin_test_support.hpp"

using namespace plugin_test;

namespace {

bool has_algorithm(const std::string& name) {
  const std::vector<std::string> names = tessera::dist::algorithm_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string canonical_text(const std::filesystem::path& file) {
  return std::filesystem::weakly_canonical(file).string();
}

}  // namespace

TEST_CASE("a second plugin with a loaded plugin's name is rejected before its init, naming both files") {
  const ResetAndUnload cleanup({"coll-params"});
  const PluginLog log;
  tessera::load_plugin(test_plugin("coll-params").string());
  const std::filesystem::path twin = test_plugin("bad-same-plugin-name");
  const std::string message = load_error(twin);
  CAPTURE(message);
  CHECK(contains(message, "plugin '" + twin.string() +
                              "' rejected: its plugin name 'coll-params' is already taken by " +
                              canonical_text(test_plugin("coll-params"))));
  CHECK(log.count("twin *") == 0);  // neither initialised nor finalized
  CHECK_FALSE(has_algorithm("params-twin-direct"));
  CHECK(has_algorithm("params-direct"));
}

TEST_CASE("a probe reports the plugin-name clash that a load would reject") {
  const ResetAndUnload cleanup({"coll-params"});
  const PluginLog log;
  tessera::load_plugin(test_plugin("coll-params").string());
  const tessera::PluginProbe probe = tessera::probe_plugin(test_plugin("bad-same-plugin-name"));
  CHECK_FALSE(probe.accepted);
  CHECK(contains(probe.reason, "its plugin name 'coll-params' is already taken by"));
  CHECK(log.count("twin *") == 0);
  // The loaded plugin is still probed as accepted, without a second init.
  CHECK(tessera::probe_plugin(test_plugin("coll-params")).accepted);
  CHECK(log.count("init*") == 1);
}

TEST_CASE("a probe reports a component clash that a load would reject") {
  // The bundled "cpu" backend is loaded by the probe's admission check if it is not yet.
  const tessera::PluginProbe probe = tessera::probe_plugin(test_plugin("bad-duplicate-cpu"));
  CHECK_FALSE(probe.accepted);
  CHECK(contains(probe.reason, "backend 'cpu' is already provided by"));
  CHECK_FALSE(has_backend("bad-duplicate-cpu"));
}

TEST_CASE("unloading by name removes the one plugin of that name, and the name is free again") {
  const ResetAndUnload cleanup({"coll-params"});
  const PluginLog log;
  tessera::load_plugin(test_plugin("coll-params").string());
  CHECK_THROWS_AS(tessera::load_plugin(test_plugin("bad-same-plugin-name").string()), tessera::PluginError);
  tessera::unload_plugin("coll-params");
  CHECK_FALSE(has_algorithm("params-direct"));
  CHECK(log.count("finalize") == 1);
  // Now the other file may take the name; unloading it removes its own algorithm.
  tessera::load_plugin(test_plugin("bad-same-plugin-name").string());
  CHECK(has_algorithm("params-twin-direct"));
  CHECK_FALSE(has_algorithm("params-direct"));
  tessera::unload_plugin("coll-params");
  CHECK_FALSE(has_algorithm("params-twin-direct"));
  CHECK(log.count("twin finalize") == 1);
}
