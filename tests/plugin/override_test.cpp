// Name clashes with the bundled plugins (SDK 1.3 TESSERA_COMPONENT_OVERRIDES): a plugin claiming the
// algorithm "ring" or the placement prefix "S" is rejected naming both plugins, even when it is
// loaded before any collective or placement was looked up (the bundled plugins of the kinds it
// provides are loaded first), and the built-ins keep working. A claim flagged as overriding
// replaces the built-in only where configuration allows it: [plugins] allow_override in a file,
// TESSERA_PLUGIN_ALLOW_OVERRIDE (which wins), or Config::plugin_allow_override; unloading it
// brings the built-in back. (TESSERA_CONFIG: tests/config/CMakeLists.txt.)
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "comm/components.hpp"
#include "dtensor/placement_strategies.hpp"
#include "plugin/registry.hpp"
#include "plugin_test_support.hpp"

using namespace plugin_test;
namespace ts = tessera;
using tessera::plugin::Registry;

namespace {

std::string ring_provider() { return ts::comm::algorithm("ring")->plugin().info().name; }
std::string prefix_s_strategy() { return ts::dtensor::placement_by_prefix("S")->name(); }

// An all_reduce with "ring" over 3 ranks computes the sums (0 + 1 + 2 + 3 k), whoever provides it.
// Runs under the built-in rules before and after (set back with "", not with their text: rules
// are checked against the algorithms loaded when they are set, and an overriding 'ring' that offers
// only all_reduce makes the built-in text's all_gather:ring a rule no algorithm could follow).
void ring_all_reduce_works() {
  ts::dist::set_algorithms("all_reduce:ring;*:direct");
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < 3; ++r) shards.emplace_back(r, ts::arange(5).to(ts::kFloat32) + 1.0 * r);
  ts::Tensor t = ts::local_tensor(ts::RankMap<ts::Tensor>(shards));
  ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  for (int r = 0; r < 3; ++r) CHECK(t.shard(r).to_vector<float>() == std::vector<float>{3, 6, 9, 12, 15});
  ts::dist::set_algorithms("");
}

// Shard(0) over a 1-d mesh of 3 splits 7 elements as torch.chunk does (ceil(7 / 3) = 3 each, the
// rest last: 3, 3, 1), and gathers them back.
void shard_works() {
  ts::LocalMode mode(3);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::Tensor x;
  {
    auto plain = mode.disable();
    x = ts::arange(7).to(ts::kFloat32);
  }
  const ts::DTensor dt = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  CHECK(dt.to_local().shard(0).numel() == 3);
  CHECK(dt.to_local().shard(1).numel() == 3);
  CHECK(dt.to_local().shard(2).numel() == 1);
  CHECK(ts::equal(dt.full_tensor().reconcile(), x));
}

// Unloads what the cases here load (overriding disallowed and the claims unloaded).
struct OverrideCleanup : ResetAndUnload {
  OverrideCleanup() : ResetAndUnload({"bad-claim-ring-overrides", "bad-claim-prefix-s-overrides"}) {}
};

tessera::Config allowing(bool allow) {
  tessera::Config config;
  config.plugin_allow_override = allow;
  return config;
}

}  // namespace

TEST_CASE(
    "a plugin claiming algorithm 'ring', loaded first, is rejected naming both plugins, and ring still "
    "works") {
  const OverrideCleanup cleanup;
  const std::filesystem::path file = test_plugin("bad-claim-ring");
  const std::string message = load_error(file);
  CAPTURE(message);
  CHECK(contains(message, "plugin '" + file.string() +
                              "' rejected: collective algorithm 'ring' is already provided by"));
  CHECK(contains(message, "libtessera-coll-ring.so (plugin 'coll-ring')"));
  CHECK(contains(message, "names must be unique"));
  CHECK_FALSE(is_loaded("bad-claim-ring"));
  CHECK(ring_provider() == "coll-ring");
  ring_all_reduce_works();
}

TEST_CASE(
    "a plugin claiming placement prefix 'S', loaded first, is rejected naming both plugins, and Shard(0) "
    "works") {
  const OverrideCleanup cleanup;
  const std::filesystem::path file = test_plugin("bad-claim-prefix-s");
  const std::string message = load_error(file);
  CAPTURE(message);
  CHECK(contains(message, "placement 'my-shard' (prefix 'S') clashes with 'shard' (prefix 'S') from"));
  CHECK(contains(message, "(plugin 'placement-std')"));
  CHECK_FALSE(is_loaded("bad-claim-prefix-s"));
  CHECK(prefix_s_strategy() == "shard");
  shard_works();
}

TEST_CASE("a claim flagged TESSERA_COMPONENT_OVERRIDES is still rejected while overriding is not allowed") {
  const OverrideCleanup cleanup;
  const std::string message = load_error(test_plugin("bad-claim-ring-overrides"));
  CHECK(contains(message,
                 "the component sets TESSERA_COMPONENT_OVERRIDES, but overriding is not allowed by the "
                 "configuration ([plugins] allow_override = true or TESSERA_PLUGIN_ALLOW_OVERRIDE=1)"));
  CHECK(ring_provider() == "coll-ring");
}

TEST_CASE("allowed by configure(), a flagged 'ring' replaces the built-in until it is unloaded") {
  const OverrideCleanup cleanup;
  tessera::configure(allowing(true));
  tessera::load_plugin(test_plugin("bad-claim-ring-overrides").string());
  CHECK(ring_provider() == "bad-claim-ring-overrides");
  ring_all_reduce_works();  // its direct all_reduce
  // The unflagged claim is refused whatever the configuration.
  CHECK(contains(load_error(test_plugin("bad-claim-ring")), "names must be unique"));
  tessera::unload_plugin("bad-claim-ring-overrides");
  CHECK(ring_provider() == "coll-ring");
  ring_all_reduce_works();
  tessera::configure(allowing(false));
}

TEST_CASE("allowed, a flagged prefix 'S' strategy replaces 'shard' until it is unloaded") {
  const OverrideCleanup cleanup;
  tessera::configure(allowing(true));
  tessera::load_plugin(test_plugin("bad-claim-prefix-s-overrides").string());
  CHECK(prefix_s_strategy() == "my-shard");
  // Replaced, not shadowed: the strategy named "shard" (which ts::Shard names) is gone meanwhile.
  CHECK(ts::dtensor::placement("shard") == nullptr);
  CHECK(contains(error_of([] { shard_works(); }), "no placement strategy named 'shard' is loaded"));
  tessera::unload_plugin("bad-claim-prefix-s-overrides");
  CHECK(prefix_s_strategy() == "shard");
  shard_works();
  tessera::configure(allowing(false));
}

TEST_CASE(
    "[plugins] allow_override in a file allows overriding, and TESSERA_PLUGIN_ALLOW_OVERRIDE wins over it") {
  const OverrideCleanup cleanup;
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tessera-override-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(file) << "[plugins]\nallow_override = true\n";
  {
    const ScopedEnv refuse("TESSERA_PLUGIN_ALLOW_OVERRIDE", "0");
    tessera::configure(tessera::Config::from_file(file));
    CHECK(contains(load_error(test_plugin("bad-claim-ring-overrides")), "overriding is not allowed"));
  }
  tessera::configure(tessera::Config::from_file(file));
  tessera::load_plugin(test_plugin("bad-claim-ring-overrides").string());
  CHECK(ring_provider() == "bad-claim-ring-overrides");
  tessera::unload_plugin("bad-claim-ring-overrides");
  std::filesystem::remove(file);

  // The variable alone allows it over a configuration that does not.
  const ScopedEnv allow("TESSERA_PLUGIN_ALLOW_OVERRIDE", "1");
  tessera::configure(allowing(false));
  tessera::load_plugin(test_plugin("bad-claim-ring-overrides").string());
  CHECK(ring_provider() == "bad-claim-ring-overrides");
}

TEST_CASE("a malformed TESSERA_PLUGIN_ALLOW_OVERRIDE is a ConfigError naming it") {
  const OverrideCleanup cleanup;
  const ScopedEnv bad("TESSERA_PLUGIN_ALLOW_OVERRIDE", "yes");
  const std::string message = error_of([] { tessera::configure(tessera::Config{}); });
  CHECK(contains(message, "TESSERA_PLUGIN_ALLOW_OVERRIDE='yes': expected 1"));
}

TEST_CASE("a plugin claiming backend 'meta' before meta was first used is rejected, and meta still works") {
  // Nothing has asked for "meta" yet in this process (each case runs in a process of its own under
  // CTest; "cpu", the default backend, is loaded at start-up), so only the rule that the search
  // path's provider of a backend name loads first stands between the claim and the name.
  REQUIRE_FALSE(is_loaded("backend-meta"));
  const std::string message = load_error(test_plugin("bad-duplicate-meta"));
  CHECK(contains(message, "backend 'meta' is already provided by"));
  CHECK(contains(message, "libtessera-backend-meta.so"));
  CHECK_FALSE(is_loaded("bad-duplicate-meta"));
  CHECK(ts::zeros({2, 3}, ts::TensorOptions().backend("meta")).sizes() == ts::Shape{2, 3});
}
