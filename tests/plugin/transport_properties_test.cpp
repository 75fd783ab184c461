// The link properties a transport reports at init (SDK 1.5, transport.h): invalid ones are refused
// naming the transport, the field and the value (bad_plugins/transport.c, one defect each); valid
// ones cost the links between processes in a distributed world's topology, and so its cost
// estimates and ring orders; a message longer than max_message_bytes is refused; the processes'
// indices must form a permutation. The distributed world is formed in this one process with the
// scripted transport (process 0 of 2; bad_plugins/scripted_transport.c), whose properties come
// from SCRIPTED_* variables. Expected figures come from the link definitions, by hand.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/world_agreement.hpp"
#include "comm/cost_model.hpp"
#include "comm/run_collective.hpp"
#include "plugin/registry.hpp"
#include "plugin_test_support.hpp"
#include "tensor/tensor_impl.hpp"
#include "world/process_link.hpp"
#include "world/world.hpp"

using namespace plugin_test;
namespace ts = tessera;

namespace {

// The transport `name` of the test plugin built as libtessera-<file>.so, loaded unless it is.
std::shared_ptr<const ts::plugin::Transport> transport_of(const std::string& file, const std::string& name) {
  if (!has_transport(name)) ts::load_plugin(test_plugin(file).string());
  auto transport = ts::plugin::Registry::instance().transport(name);
  REQUIRE(transport != nullptr);
  return transport;
}

std::shared_ptr<const ts::plugin::Transport> scripted() {
  return transport_of("bad-scripted-transport", "transport-scripted");
}

// Topology::fully_connected's defaults: the preset when none is configured.
constexpr double kPresetBandwidth = 100e9;
constexpr double kPresetLatency = 2e-6;

// The cost model's time of a broadcast of `count` float32 by "direct" from members[0] to members[1].
double broadcast_seconds(const ts::Topology& topology, const std::vector<int>& members, int64_t count) {
  const tessera_collective_request request =
      ts::comm::make_request(TESSERA_COLL_BROADCAST, 2, count, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  return ts::comm::estimate(*ts::comm::cached_schedule("direct", request), members, topology, 4).seconds;
}

}  // namespace

TEST_CASE("invalid link properties at init are errors naming the transport, the field and the value") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nan-latency",
       "init reported latency nan; expected a finite number of seconds per message >= 0 (0: unknown)"},
      {"infinite-latency", "init reported latency inf; expected a finite number of seconds per message >= 0"},
      {"negative-bandwidth",
       "init reported bandwidth -1000000000; expected a finite number of bytes per second >= 0"},
      {"small-max-message", "init reported max_message_bytes 1024; expected 0 (no limit) or at least 4352"},
      {"device-memory-2", "init reported device_memory 2; expected 0 (host memory only) or 1"},
  };
  std::vector<std::string> plugins;
  for (const auto& [defect, _] : cases) plugins.push_back("bad-transport-" + defect);
  const ResetAndUnload cleanup(plugins);
  for (const auto& [defect_name, problem] : cases) {
    const std::string& defect = defect_name;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(defect);
    const std::string name = "bad-transport-" + defect;
    const auto transport = transport_of(name, name);
    const std::string message = error_of([&] { ts::world::ProcessLink link(transport, 1, 500); });
    CAPTURE(message);
    CHECK(contains(message, "transport '" + name + "': " + problem));
  }
}

TEST_CASE("a transport that reports no properties leaves the world's topology as the preset") {
  const ResetAndUnload cleanup({"transport-scripted"});
  auto link = std::make_shared<ts::world::ProcessLink>(scripted(), 3, 500);
  CHECK(link->properties().latency == 0.0);
  CHECK(link->properties().bandwidth == 0.0);
  CHECK(link->properties().max_message_bytes == 0);
  CHECK_FALSE(link->properties().device_memory);
  ts::world::WorldState world(link, 3, false);
  CHECK(world.links_key() == 0);
  const ts::Topology topology = world.topology(6);
  CHECK(topology.fingerprint() == ts::Topology::fully_connected(6).fingerprint());
  CHECK(world.ring_order(6, {3, 0, 1, 2, 4, 5}).empty());  // every link equal: by rank after the first
}

TEST_CASE("a transport's latency and bandwidth cost the links between processes, and so the estimates") {
  const ResetAndUnload cleanup({"transport-scripted"});
  constexpr double kLatency = 1e-3, kBandwidth = 1e6;
  const ScopedEnv latency("SCRIPTED_LATENCY", "1e-3");
  const ScopedEnv bandwidth("SCRIPTED_BANDWIDTH", "1e6");
  auto link = std::make_shared<ts::world::ProcessLink>(scripted(), 3, 500);
  CHECK(link->properties().latency == kLatency);
  CHECK(link->properties().bandwidth == kBandwidth);
  ts::world::WorldState world(link, 3, false);  // process 0 hosts ranks 0..2; process 1 ranks 3..5
  CHECK(world.links_key() != 0);
  const ts::Topology topology = world.topology(6);
  CHECK(topology.name() == "fully_connected (transport-scripted between processes)");
  for (const auto& [from, to] : std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {3, 4}, {4, 5}}) {
    const int a = from, b = to;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(a);
    CAPTURE(b);
    CHECK(topology.link(a, b).latency == kPresetLatency);
    CHECK(topology.link(a, b).bandwidth == kPresetBandwidth);
  }
  for (const auto& [from, to] : std::vector<std::pair<int, int>>{{0, 3}, {0, 5}, {2, 3}, {1, 4}}) {
    const int a = from, b = to;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(a);
    CAPTURE(b);
    CHECK(topology.link(a, b).latency == kLatency);
    CHECK(topology.link(a, b).bandwidth == kBandwidth);
  }
  // A broadcast of 4 KiB between processes costs the transport's alpha-beta, inside one the preset's.
  const double bytes = 4096;
  CHECK(broadcast_seconds(topology, {0, 3}, 1024) ==
        doctest::Approx(kLatency + bytes / kBandwidth).epsilon(1e-12));
  CHECK(broadcast_seconds(topology, {0, 1}, 1024) ==
        doctest::Approx(kPresetLatency + bytes / kPresetBandwidth).epsilon(1e-12));
  // Collectives take the same topology with their ring order. From rank 3 the preset alone goes on
  // by rank (0, 1, 2, 4, 5: the natural order of these members); with slow links between processes
  // the ring first visits 3's own process (4, 5), then crosses once to 0, 1, 2: as group ranks
  // 0, 4, 5, 1, 2, 3.
  ts::Topology used;
  CHECK(world.ring_order(6, {3, 0, 1, 2, 4, 5}, used) == std::vector<int32_t>{0, 4, 5, 1, 2, 3});
  CHECK(used.fingerprint() == topology.fingerprint());
}

TEST_CASE("only the property the transport knows replaces the preset's, and domains stay") {
  const ResetAndUnload cleanup({"transport-scripted"});
  const ScopedEnv bandwidth("SCRIPTED_BANDWIDTH", "2e9");
  ts::set_default_topology("nodes:2");
  struct Restore {
    ~Restore() { ts::set_default_topology(""); }
  } restore;
  auto link = std::make_shared<ts::world::ProcessLink>(scripted(), 2, 500);
  ts::world::WorldState world(link, 2, false);
  const ts::Topology topology = world.topology(4);
  // nodes:2 over 4 ranks: 0-1 and 2-3 inside a node (and a process), 0-2 and 1-3 between them.
  CHECK(topology.link(0, 1).bandwidth == 300e9);
  CHECK(topology.link(0, 2).bandwidth == 2e9);
  CHECK(topology.link(0, 2).latency == 10e-6);      // the preset's inter-node latency: none reported
  CHECK_THROWS_AS(topology.link(0, 3), ts::Error);  // still unlinked, as in the preset
  for (int r = 0; r < 4; ++r) CHECK(topology.locality(r, ts::Topology::kLocalityNode) == r / 2);
}

TEST_CASE(
    "a message longer than the transport's max_message_bytes is refused before it reaches the transport") {
  const ResetAndUnload cleanup({"transport-scripted"});
  const ScopedEnv most("SCRIPTED_MAX_MESSAGE", "8192");
  const ts::Tensor fits = ts::zeros({2048}, ts::TensorOptions(ts::kFloat32));  // 8192 bytes
  const ts::Tensor longer = ts::zeros({2049}, ts::TensorOptions(ts::kFloat32));
  ts::world::ProcessLink link(scripted(), 1, 500);
  CHECK(link.properties().max_message_bytes == 8192);
  std::shared_ptr<ts::world::ProcessLink::Request> sent = link.isend(fits, 1, 3);
  CHECK(link.test(*sent, [] { return std::string("fitting send"); }));
  sent.reset();
  const std::string message = error_of([&] { link.isend(longer, 1, 4); });
  CAPTURE(message);
  CHECK(contains(message,
                 "isend of 2049 element(s) to process 1 (tag 4): the message is 8196 bytes, longer than the "
                 "8192 bytes the transport takes at most (max_message_bytes, reported at init)"));
  CHECK(link.broken());
}

TEST_CASE(
    "the processes' settings carry the transport's properties, and their indices must be a permutation") {
  const ResetAndUnload cleanup({"transport-scripted"});
  const ScopedEnv latency("SCRIPTED_LATENCY", "0.5");
  ts::world::ProcessLink link(scripted(), 1, 500);
  const std::map<std::string, std::string> settings = ts::api::world_settings(ts::Config{}, link, false);
  REQUIRE(settings.count("transport properties") == 1);
  CHECK(contains(settings.at("transport properties"), "latency 0.5 s"));
  CHECK(contains(settings.at("transport properties"), "max message 0 bytes, device memory no"));
  // The scripted peer's "settings" are bytes of 0x3f: it reports no index, so process 1 of the
  // all-gather is not process 1.
  const std::string message = error_of([&] { ts::api::require_agreement(link, settings); });
  CAPTURE(message);
  CHECK(contains(message,
                 "transport 'transport-scripted' reported process indices that are not a permutation of 0..1 "
                 "in process order: process 1 of the all-gather reported index none"));
}
