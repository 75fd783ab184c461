// SDK minor versions across the boundary (host: SDK 1.7; 1.1 added the transport kind, 1.2 the
// backend's flags, 1.3 the component's flags, the plugin's lifecycle and extension chains, 1.4 the
// fold kernels, no struct, 1.5 the transport's abort, 1.6 the indexing kernels, no struct, 1.7 the
// normalisation kernels, no struct). Backends built for 1.0 and 1.1 still load, their shorter tables read as
// ordinary backends; a 1.2 plugin's info and component, ending before the 1.3 fields, read as having none of
// them; one built for a newer minor loads too, read up to what the host knows; a valid transport is
// registered under its name and leaves with its plugin.
#include <algorithm>
#include <string>
#include <vector>

#include "plugin_test_support.hpp"
#include "tessera/sdk/version.h"

using namespace plugin_test;

TEST_CASE("the host is SDK 1.7") {
  CHECK(TESSERA_SDK_VERSION_MAJOR == 1);
  CHECK(TESSERA_SDK_VERSION_MINOR == 7);
}

TEST_CASE("a plugin built for SDK 1.2 loads: its info ends before init, its component before flags") {
  // Past the 1.2 sizes lie an init that refuses and the override flag: read, either would show.
  const std::filesystem::path file = test_plugin("backend-sdk12");
  const tessera::PluginInfo info = tessera::load_plugin(file.string());
  CHECK(info.name == "backend-sdk12");
  CHECK(info.sdk_minor == 2);
  CHECK(has_backend("backend-sdk12"));
  CHECK(tessera::zeros({3}, tessera::TensorOptions().backend("backend-sdk12")).to_vector<float>().size() ==
        3);
  // It has no set_parameter either: a parameter for it is a configuration error.
  tessera::Config config;
  config.plugin_parameters["backend-sdk12"]["threads"] = "4";
  const std::string message = error_of([&] { tessera::configure(config); });
  CHECK(contains(message, "plugin 'backend-sdk12' takes no parameters (it has no set_parameter)"));
  tessera::unload_plugin("backend-sdk12");
  CHECK_FALSE(has_backend("backend-sdk12"));
  check_cpu_still_works();
}

TEST_CASE("a 1.2 component's flags are not read: with overriding allowed it still cannot replace 'cpu'") {
  tessera::Config config;
  config.plugin_allow_override = true;
  tessera::configure(config);
  tessera::load_plugin("backend-cpu");
  const std::filesystem::path file = test_plugin("backend-sdk12-cpu");
  const std::string message = load_error(file);
  CHECK(contains(message, "backend 'cpu' is already provided by "));
  CHECK(contains(message, "(plugin 'backend-cpu')"));
  CHECK(contains(message, "names must be unique"));
  CHECK_FALSE(is_loaded("backend-sdk12-cpu"));
  tessera::configure(tessera::Config{});
  check_cpu_still_works();
}

TEST_CASE("an SDK 1.3 plugin with well-formed extension chains of unknown types loads and works") {
  const tessera::PluginInfo info = tessera::load_plugin(test_plugin("extension-chain").string());
  CHECK(info.sdk_minor == TESSERA_SDK_VERSION_MINOR);
  CHECK(has_backend("extension-chain"));
  CHECK(tessera::empty({4}, tessera::TensorOptions().backend("extension-chain")).numel() == 4);
  tessera::unload_plugin("extension-chain");
  check_cpu_still_works();
}

TEST_CASE(
    "a plugin built for a newer minor may use an SDK extension type this host does not know: it is skipped") {
  const tessera::PluginInfo info = tessera::load_plugin(test_plugin("extension-future-type").string());
  CHECK(info.sdk_minor == 99);
  CHECK(tessera::empty({3}, tessera::TensorOptions().backend("extension-future-type")).numel() == 3);
  tessera::unload_plugin("extension-future-type");
}

TEST_CASE("a plugin built for SDK 1.0 loads in the 1.2 host and its backend computes") {
  const std::filesystem::path file = test_plugin("backend-sdk10");
  const tessera::PluginInfo info = tessera::load_plugin(file.string());
  CHECK(info.name == "backend-sdk10");
  CHECK(info.sdk_major == 1);
  CHECK(info.sdk_minor == 0);
  REQUIRE(info.components.size() == 1);
  CHECK(info.components[0].kind == "backend");
  CHECK(info.components[0].name == "backend-sdk10");
  CHECK(has_backend("backend-sdk10"));
  CHECK(tessera::probe_plugin(file).accepted);
  // Its host memory works (the backend's "fill" kernel is a no-op, so only allocation is used).
  CHECK(tessera::empty({4}, tessera::TensorOptions().backend("backend-sdk10")).numel() == 4);
  // Its table ends before the 1.2 flags: an ordinary backend, whose values can be read.
  CHECK(tessera::empty({4}, tessera::TensorOptions().backend("backend-sdk10")).to_vector<float>().size() ==
        4);
  tessera::unload_plugin("backend-sdk10");
  CHECK_FALSE(has_backend("backend-sdk10"));
  check_cpu_still_works();
}

TEST_CASE("a backend built for SDK 1.1 (a table without the 1.2 flags) loads and is an ordinary backend") {
  const std::filesystem::path file = test_plugin("backend-sdk11");
  const tessera::PluginInfo info = tessera::load_plugin(file.string());
  CHECK(info.name == "backend-sdk11");
  CHECK(info.sdk_major == 1);
  CHECK(info.sdk_minor == 1);
  CHECK(has_backend("backend-sdk11"));
  const tessera::Tensor t = tessera::zeros({3}, tessera::TensorOptions().backend("backend-sdk11"));
  CHECK(t.backend() == "backend-sdk11");
  // Values are read through its copy function, never refused as shapes-only.
  CHECK(t.to_vector<float>().size() == 3);
  tessera::unload_plugin("backend-sdk11");
  CHECK_FALSE(has_backend("backend-sdk11"));
  check_cpu_still_works();
}

TEST_CASE("a valid transport is registered by name and removed on unload") {
  CHECK_FALSE(has_transport("transport-testnet"));
  const tessera::PluginInfo info = tessera::load_plugin(test_plugin("transport-testnet").string());
  CHECK(info.sdk_major == 1);
  CHECK(info.sdk_minor == TESSERA_SDK_VERSION_MINOR);
  REQUIRE(info.components.size() == 1);
  CHECK(info.components[0].kind == "transport");
  CHECK(info.components[0].name == "transport-testnet");
  CHECK(has_transport("transport-testnet"));

  // A second plugin offering the same transport name is rejected and the first stays.
  const std::filesystem::path duplicate = test_plugin("bad-duplicate-transport");
  const std::string message = load_error(duplicate);
  CHECK(contains(message, duplicate.string()));
  CHECK(contains(message, "transport 'transport-testnet' is already provided by " + info.file.string()));
  CHECK(has_transport("transport-testnet"));
  tessera::unload_plugin("transport-testnet");
  CHECK_FALSE(has_transport("transport-testnet"));
  check_cpu_still_works();
}

TEST_CASE(
    "a plugin built for a newer SDK minor loads: larger tables are read up to the host's size, "
    "unknown kinds are skipped") {
  const tessera::PluginInfo info = tessera::load_plugin(test_plugin("transport-future").string());
  CHECK(info.sdk_major == 1);
  CHECK(info.sdk_minor == TESSERA_SDK_VERSION_MINOR + 1);
  REQUIRE(info.components.size() == 2);
  CHECK(info.components[0].kind == "transport");
  CHECK(info.components[0].name == "transport-future");
  CHECK(info.components[1].kind == "unknown");
  CHECK(info.components[1].name == "future-thing");
  CHECK(has_transport("transport-future"));
  tessera::unload_plugin("transport-future");
  CHECK_FALSE(has_transport("transport-future"));
  check_cpu_still_works();
}
