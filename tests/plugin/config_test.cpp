// Config parsing errors (file, line, key) and configure() with a plugin and a default backend.
#include <string>

#include "plugin_test_support.hpp"

using namespace plugin_test;
using tessera::Config;

namespace {

// The ConfigError message of parsing `toml` as the file "cfg/tessera.toml"; a failed check if none.
std::string config_error(const std::string& toml) {
  try {
    (void)Config::from_string(toml, "cfg/tessera.toml");
  } catch (const tessera::ConfigError& e) {
    return e.what();
  }
  FAIL_CHECK("no ConfigError for:\n" << toml);
  return {};
}

// Puts the default backend back to "cpu" whatever happens in the test.
struct RestoreDefaultBackend {
  ~RestoreDefaultBackend() {
    try {
      tessera::set_default_backend("cpu");
    } catch (...) {
    }
  }
};

}  // namespace

TEST_CASE("Config from_string reads every key") {
  const Config config = Config::from_string(
      "[plugins]\n"
      "search_path = [\"plugins\", \"/opt/tessera/plugins\"]\n"
      "load = [\"backend-cpu\", \"./libtessera-mine.so\", \"/abs/libtessera-other.so\"]\n"
      "[backend]\n"
      "default = \"cpu\"\n"
      "[log]\n"
      "level = \"info\"\n"
      "[collectives]\n"
      "tuner = \"site\"\n",
      "/etc/tessera/tessera.toml");
  CHECK(config.source == "/etc/tessera/tessera.toml");
  REQUIRE(config.plugin_search_path.size() == 2);
  CHECK(config.plugin_search_path[0] == "/etc/tessera/plugins");  // relative to the file
  CHECK(config.plugin_search_path[1] == "/opt/tessera/plugins");
  CHECK(config.plugins_to_load == std::vector<std::string>{"backend-cpu", "/etc/tessera/./libtessera-mine.so",
                                                           "/abs/libtessera-other.so"});
  CHECK(config.default_backend == "cpu");
  CHECK(config.log_level == "info");
  CHECK(config.collective_tuner == "site");
}

TEST_CASE("Config rejects an unknown key naming file line and key") {
  const std::string message = config_error("[log]\nlevel = \"info\"\n[plugins]\nsearch_paht = [\"x\"]\n");
  CAPTURE(message);
  CHECK(contains(message, "cfg/tessera.toml:4"));
  CHECK(contains(message, "'plugins.search_paht'"));
  CHECK(contains(message, "unknown key"));
  CHECK(contains(message, "plugins.search_path"));  // what was expected

  const std::string top = config_error("[plugin]\nload = []\n");
  CAPTURE(top);
  CHECK(contains(top, "cfg/tessera.toml:1"));
  CHECK(contains(top, "'plugin'"));
}

TEST_CASE("Config rejects a value of the wrong type naming file line and key") {
  const std::string scalar = config_error("\n[backend]\ndefault = 3\n");
  CAPTURE(scalar);
  CHECK(contains(scalar, "cfg/tessera.toml:3"));
  CHECK(contains(scalar, "'backend.default'"));
  CHECK(contains(scalar, "expected a string"));

  const std::string item = config_error("[plugins]\nload = [\"backend-cpu\",\n  7]\n");
  CAPTURE(item);
  CHECK(contains(item, "cfg/tessera.toml:3"));
  CHECK(contains(item, "'plugins.load'"));
  CHECK(contains(item, "expected an array of strings"));

  const std::string table = config_error("backend = \"cpu\"\n");
  CAPTURE(table);
  CHECK(contains(table, "cfg/tessera.toml:1"));
  CHECK(contains(table, "'backend'"));
  CHECK(contains(table, "expected a table"));
}

TEST_CASE("Config reports a syntax error with file and line") {
  const std::string message = config_error("[log]\nlevel = \"info\"\n[plugins\nload = []\n");
  CAPTURE(message);
  CHECK(contains(message, "cfg/tessera.toml:3"));
}

TEST_CASE("Config from_file names a missing file") {
  CHECK_THROWS_WITH_AS(Config::from_file("/nonexistent/tessera.toml"),
                       doctest::Contains("/nonexistent/tessera.toml"), tessera::ConfigError);
}

TEST_CASE("configure loads a plugin by path and sets the default backend") {
  const RestoreDefaultBackend restore;
  const Config config =
      Config::from_string("[plugins]\nload = [\"" + testdev_file().string() +
                              "\"]\n[backend]\ndefault = \"testdev\"\n[log]\nlevel = \"warn\"\n",
                          "configure-test.toml");
  tessera::configure(config);
  CHECK(is_loaded("backend-testdev"));
  CHECK(tessera::default_backend() == "testdev");
  const tessera::Tensor t = tessera::full({2}, 4.0f);
  CHECK(t.backend() == "testdev");
  CHECK(t.to_vector<float>() == std::vector<float>{4, 4});

  tessera::set_default_backend("cpu");
  CHECK(tessera::default_backend() == "cpu");
  CHECK(tessera::ones({1}).backend() == "cpu");
  check_cpu_still_works();
}

TEST_CASE("configure with a plugin that is rejected throws and keeps the default backend") {
  const RestoreDefaultBackend restore;
  tessera::set_default_backend("cpu");
  const Config config = Config::from_string("[plugins]\nload = [\"" + test_plugin("bad-no-query").string() +
                                                "\"]\n[backend]\ndefault = \"testdev\"\n",
                                            "configure-test.toml");
  CHECK_THROWS_WITH_AS(tessera::configure(config), doctest::Contains("libtessera-bad-no-query.so"),
                       tessera::PluginError);
  CHECK(tessera::default_backend() == "cpu");
  check_cpu_still_works();
}

TEST_CASE("set_default_backend to an unknown backend throws and keeps the default") {
  const RestoreDefaultBackend restore;
  tessera::set_default_backend("cpu");
  CHECK_THROWS_AS(tessera::set_default_backend("no-such-backend"), tessera::Error);
  CHECK(tessera::default_backend() == "cpu");
  check_cpu_still_works();
}
