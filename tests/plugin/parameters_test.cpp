// SDK 1.3 plugin parameters: [plugins.<plugin>] keys of a configuration file, TESSERA_PLUGIN_PARAMS
// (winning per key) and Config::plugin_parameters, applied by configure(): passed to a loaded
// plugin at once and only when changed, kept for a plugin not yet loaded and passed after its init;
// a refusal is a ConfigError naming plugin, key, value, where the value came from and the plugin's
// own message; the schedules of the plugin's algorithms are built afresh after a change. The
// plugin, libtessera-coll-params.so, records each accepted value and each schedule it builds.
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "plugin_log.hpp"
#include "plugin_test_support.hpp"

using namespace plugin_test;
namespace ts = tessera;

namespace {

constexpr int kParameterRanks = 3;

// Unloads what the cases here load (no parameters in force and the test plugins unloaded).
struct ParameterCleanup : ResetAndUnload {
  ParameterCleanup() : ResetAndUnload({"coll-params", "backend-testdev"}) {}
};

tessera::Config with_parameter(const std::string& plugin, const std::string& key, const std::string& value) {
  tessera::Config config;
  config.plugin_parameters[plugin][key] = value;
  return config;
}

// An all_reduce over 3 ranks with the plugin's algorithm; checks the sums (0 + 1 + 2 + 3 k).
void all_reduce_with_params_direct() {
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce:params-direct;*:direct");
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < kParameterRanks; ++r) shards.emplace_back(r, ts::arange(4).to(ts::kFloat32) + 1.0 * r);
  ts::Tensor t = ts::local_tensor(ts::RankMap<ts::Tensor>(shards));
  ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  for (int r = 0; r < kParameterRanks; ++r)
    CHECK(t.shard(r).to_vector<float>() == std::vector<float>{3, 6, 9, 12});
  ts::dist::set_algorithms(saved);
}

std::filesystem::path write_config(const std::string& text) {
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tessera-params-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(file) << text;
  return file;
}

}  // namespace

TEST_CASE("configure() passes a parameter to a loaded plugin, again only when it changes") {
  const ParameterCleanup cleanup;
  const PluginLog log;
  tessera::load_plugin(test_plugin("coll-params").string());
  tessera::configure(with_parameter("coll-params", "group_size", "3"));
  CHECK(log.count("set group_size=3") == 1);
  tessera::configure(with_parameter("coll-params", "group_size", "3"));
  CHECK(log.count("set group_size=3") == 1);  // unchanged: not passed again
  tessera::configure(with_parameter("coll-params", "group_size", "5"));
  CHECK(log.count("set group_size=5") == 1);
  CHECK(log.lines().back() == "set group_size=5");
}

TEST_CASE("schedules of the plugin's algorithms are built afresh after a parameter changes") {
  const ParameterCleanup cleanup;
  const PluginLog log;
  tessera::load_plugin(test_plugin("coll-params").string());
  all_reduce_with_params_direct();
  all_reduce_with_params_direct();
  CHECK(log.count("build group_size=2") == 1);  // the second call used the cached schedule
  tessera::configure(with_parameter("coll-params", "group_size", "4"));
  all_reduce_with_params_direct();
  CHECK(log.count("build group_size=4") == 1);
  CHECK(log.count("build*") == 2);
}

TEST_CASE("a value the plugin refuses is a ConfigError naming plugin, key, value, origin and its message") {
  const ParameterCleanup cleanup;
  const PluginLog log;
  tessera::load_plugin(test_plugin("coll-params").string());
  tessera::configure(with_parameter("coll-params", "group_size", "3"));
  std::string message = error_of<tessera::ConfigError>(
      [] { tessera::configure(with_parameter("coll-params", "group_size", "0")); });
  CHECK(message ==
        "configuration: plugin 'coll-params' refused parameter 'group_size' = '0': group_size must be an "
        "integer >= 1, got '0'");
  message = error_of<tessera::ConfigError>(
      [] { tessera::configure(with_parameter("coll-params", "group_size", "three")); });
  CHECK(contains(
      message, "refused parameter 'group_size' = 'three': group_size must be an integer >= 1, got 'three'"));
  // The value in force is still 3: setting it again passes nothing.
  tessera::configure(with_parameter("coll-params", "group_size", "3"));
  CHECK(log.count("set group_size=3") == 1);
  CHECK(log.count("set group_size=0") == 0);
}

TEST_CASE("an unknown key is refused with the known ones listed") {
  const ParameterCleanup cleanup;
  tessera::load_plugin(test_plugin("coll-params").string());
  const std::string message = error_of<tessera::ConfigError>(
      [] { tessera::configure(with_parameter("coll-params", "colour", "blue")); });
  CHECK(contains(message,
                 "plugin 'coll-params' refused parameter 'colour' = 'blue': unknown parameter 'colour'; "
                 "known: group_size, label"));
}

TEST_CASE("a parameter for a plugin without set_parameter is a ConfigError") {
  const ParameterCleanup cleanup;
  tessera::load_plugin(testdev_file().string());
  const std::string message = error_of<tessera::ConfigError>(
      [] { tessera::configure(with_parameter("backend-testdev", "speed", "fast")); });
  CHECK(contains(message,
                 "plugin 'backend-testdev' takes no parameters (it has no set_parameter), but parameter "
                 "'speed' is set to 'fast' for it"));
}

TEST_CASE("parameters for a plugin not loaded are kept and passed after its init when it loads") {
  const ParameterCleanup cleanup;
  const PluginLog log;
  CHECK_NOTHROW(tessera::configure(with_parameter("coll-params", "group_size", "7")));
  CHECK(log.lines().empty());
  tessera::load_plugin(test_plugin("coll-params").string());
  REQUIRE(log.lines().size() == 2);
  CHECK(log.lines()[0].starts_with("init"));
  CHECK(log.lines()[1] == "set group_size=7");
}

TEST_CASE("a kept parameter the plugin refuses when it loads rejects the load, and the plugin is finalized") {
  const ParameterCleanup cleanup;
  const PluginLog log;
  tessera::configure(with_parameter("coll-params", "group_size", "-1"));
  const std::string message =
      error_of<tessera::ConfigError>([] { tessera::load_plugin(test_plugin("coll-params").string()); });
  CHECK(contains(message,
                 "plugin 'coll-params' refused parameter 'group_size' = '-1': group_size must be an integer "
                 ">= 1, got '-1'"));
  CHECK_FALSE(is_loaded("coll-params"));
  CHECK(log.count("init*") == 1);
  CHECK(log.count("finalize") == 1);
  CHECK(log.count("set*") == 0);
}

TEST_CASE("[plugins.<plugin>] in a file: values of every scalar type as text, errors naming file and line") {
  const ParameterCleanup cleanup;
  const PluginLog log;
  const std::filesystem::path file = write_config(
      "[plugins]\n"
      "allow_override = false\n"
      "[plugins.coll-params]\n"
      "group_size = 6\n"
      "label = \"east\"\n");
  tessera::load_plugin(test_plugin("coll-params").string());
  tessera::configure(tessera::Config::from_file(file));
  CHECK(log.count("set group_size=6") == 1);
  CHECK(log.count("set label=east") == 1);

  const tessera::Config types =
      tessera::Config::from_string("[plugins.x]\ni = -3\nf = 0.25\nb = true\ns = \"text\"\n", "types.toml");
  CHECK(types.plugin_parameters.at("x") ==
        std::map<std::string, std::string>{{"b", "true"}, {"f", "0.25"}, {"i", "-3"}, {"s", "text"}});
  CHECK(types.plugin_parameter_origins.at("x.f") == "types.toml:3: [plugins.x] f");

  std::string message = error_of<tessera::ConfigError>(
      [] { (void)tessera::Config::from_string("[plugins.x]\nlist = [1, 2]\n", "t.toml"); });
  CHECK(contains(message, "t.toml:2: key 'plugins.x.list': expected a string, integer, float or boolean"));
  message = error_of<tessera::ConfigError>(
      [] { (void)tessera::Config::from_string("[plugins]\nallow_overide = true\n", "t.toml"); });
  CHECK(contains(
      message, "t.toml:2: key 'plugins.allow_overide': unknown key; expected one of plugins.allow_override"));
  message = error_of<tessera::ConfigError>(
      [] { (void)tessera::Config::from_string("[plugins]\nallow_override = 1\n", "t.toml"); });
  CHECK(contains(message, "t.toml:2: key 'plugins.allow_override': expected true or false"));

  const std::filesystem::path bad = write_config("[plugins.coll-params]\n\ngroup_size = 0\n");
  message = error_of<tessera::ConfigError>([&] { tessera::configure(tessera::Config::from_file(bad)); });
  CHECK(contains(message, bad.string() +
                              ":3: [plugins.coll-params] group_size: plugin 'coll-params' refused "
                              "parameter 'group_size' = '0': group_size must be an integer >= 1, got '0'"));
  std::filesystem::remove(bad);
}

TEST_CASE("TESSERA_PLUGIN_PARAMS wins per key over the configuration, and errors name the variable") {
  const ParameterCleanup cleanup;
  const PluginLog log;
  tessera::load_plugin(test_plugin("coll-params").string());
  tessera::Config config = with_parameter("coll-params", "group_size", "3");
  config.plugin_parameters["coll-params"]["label"] = "from-config";
  {
    const ScopedEnv env("TESSERA_PLUGIN_PARAMS", "coll-params.group_size=9;;other-plugin.depth=2");
    tessera::configure(config);
  }
  CHECK(log.count("set group_size=9") == 1);
  CHECK(log.count("set group_size=3") == 0);
  CHECK(log.count("set label=from-config") == 1);

  const ScopedEnv bad("TESSERA_PLUGIN_PARAMS", "coll-params.group_size=0");
  std::string message = error_of<tessera::ConfigError>([&] { tessera::configure(config); });
  CHECK(contains(message,
                 "TESSERA_PLUGIN_PARAMS (entry 'coll-params.group_size=0'): plugin 'coll-params' refused "
                 "parameter 'group_size' = '0': group_size must be an integer >= 1, got '0'"));
  const ScopedEnv malformed("TESSERA_PLUGIN_PARAMS", "coll-params.group_size=4;nodot=1");
  message = error_of<tessera::ConfigError>([&] { tessera::configure(config); });
  CHECK(contains(message,
                 "TESSERA_PLUGIN_PARAMS='coll-params.group_size=4;nodot=1': entry 'nodot=1' is not "
                 "<plugin>.<key>=<value>"));
}
