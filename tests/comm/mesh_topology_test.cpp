// A DeviceMesh's own topology (with_topology) reaches every collective issued through the mesh:
// its groups' ring order and cost estimates, the rule "auto", the topology a plugin algorithm's
// estimate is shown (locality, transfer_time), and DTensor redistribution. Expected figures come
// from the topologies' link definitions, by hand; results from sums computed here.
#include <dlfcn.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "comm_plugin_support.hpp"
#include "world/world.hpp"

using namespace comm_test;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Four ranks linked only round 0-2-1-3-0: the ring that follows the links is not the natural order.
constexpr double kZigzagBandwidth = 10e9;
constexpr double kZigzagLatency = 5e-6;
ts::Topology zigzag() {
  return ts::Topology::custom(4,
                              {{0, 2, kZigzagBandwidth, kZigzagLatency},
                               {2, 1, kZigzagBandwidth, kZigzagLatency},
                               {1, 3, kZigzagBandwidth, kZigzagLatency},
                               {3, 0, kZigzagBandwidth, kZigzagLatency}},
                              "zigzag");
}

// Topology::fully_connected's defaults: the world's preset when none is configured.
constexpr double kPresetBandwidth = 100e9;
constexpr double kPresetLatency = 2e-6;

// A ring all_reduce of `bytes` per rank over p ranks whose ring follows direct links of one kind:
// 2(p - 1) steps, each moving a p-th of the data over one link.
double ring_all_reduce_seconds(int p, double bytes, double latency, double bandwidth) {
  return 2.0 * (p - 1) * (latency + bytes / p / bandwidth);
}

// Shard r holds r + 1 in each of n float32 elements.
ts::Tensor counting(int p, int64_t n) {
  return per_rank(p, [n](int r) { return ts::full({n}, static_cast<double>(r + 1)).to(ts::kFloat32); });
}

void require_every_shard(const ts::Tensor& x, int p, int64_t n, double value) {
  for (int r = 0; r < p; ++r) {
    CAPTURE(r);
    CHECK(ts::equal(x.shard(r), ts::full({n}, value).to(ts::kFloat32)));
  }
}

}  // namespace

TEST_CASE("a mesh's topology orders and costs its groups' ring collectives, the world's preset does not") {
  ScopedTopology preset("");
  ScopedRules rules("all_reduce:ring");
  ts::LocalMode mode(4);
  const ts::DeviceMesh plain = ts::init_device_mesh("cpu", {4});
  const ts::DeviceMesh mesh = plain.with_topology(zigzag());
  REQUIRE(mesh.get_group().topology() != nullptr);
  CHECK(mesh.get_group().topology()->name() == "zigzag");
  CHECK(plain.get_group().topology() == nullptr);

  // Greedy nearest neighbour from rank 0 along the links: 0, 2, 1, 3 (as group ranks, the same).
  CHECK(ts::world::current().ring_order_on(zigzag(), {0, 1, 2, 3}) == std::vector<int32_t>{0, 2, 1, 3});
  CHECK(
      ts::world::current().ring_order_on(ts::Topology::fully_connected(4), {0, 1, 2, 3}).empty());  // natural

  static constexpr int64_t n = 1 << 16;
  const double bytes = 4.0 * n;
  // Counters nest (each sees everything issued while it lives): one scope per call.
  const auto seconds_of_all_reduce = [](const ts::ProcessGroup& group) {
    ts::Tensor x = counting(4, n);
    ts::CommCounter counter;
    ts::dist::all_reduce(x, ts::ReduceOp::SUM, group);
    CHECK(algorithm_seen(counter) == "ring");
    require_every_shard(x, 4, n, 1 + 2 + 3 + 4);
    return counter.seconds();
  };
  // Every step crosses one zigzag link: only the ring order 0, 2, 1, 3 gives this (the natural one
  // sends 0 -> 1 over two hops, sharing links).
  const double on_mesh = seconds_of_all_reduce(mesh.get_group());
  CHECK(on_mesh ==
        doctest::Approx(ring_all_reduce_seconds(4, bytes, kZigzagLatency, kZigzagBandwidth)).epsilon(1e-9));
  CHECK(seconds_of_all_reduce(plain.get_group()) ==
        doctest::Approx(ring_all_reduce_seconds(4, bytes, kPresetLatency, kPresetBandwidth)).epsilon(1e-9));
  // And again on the mesh: what was chosen on the world's topology is not reused for the mesh's.
  CHECK(seconds_of_all_reduce(mesh.get_group()) == doctest::Approx(on_mesh).epsilon(1e-12));
}

TEST_CASE(
    "auto takes hier on a mesh of two-node topology, and another algorithm on the world's fully connected "
    "one") {
  ensure_loaded("coll-hier");
  // Without its group_size parameter (unset here) hier learns the nodes from the topology alone.
  ScopedTopology preset("");
  ScopedRules rules("all_reduce:auto");
  ts::LocalMode mode(12);
  const ts::DeviceMesh plain = ts::init_device_mesh("cpu", {12});
  const ts::DeviceMesh nodes = plain.with_topology(ts::Topology::nodes(12, 4));
  const int64_t n = kMiB;  // 4 MiB per rank: bandwidth-bound, where hier's one crossing per node wins
  ts::Tensor x = counting(12, n);
  ts::CommCounter on_nodes;
  ts::dist::all_reduce(x, ts::ReduceOp::SUM, nodes.get_group());
  CHECK(algorithm_seen(on_nodes) == "hier");
  require_every_shard(x, 12, n, 78);  // 1 + 2 + ... + 12

  // The world's topology states no nodes: hier cannot group the ranks and is not applicable.
  ts::Tensor y = counting(12, n);
  ts::CommCounter on_world;
  ts::dist::all_reduce(y, ts::ReduceOp::SUM, plain.get_group());
  const std::string ran = algorithm_seen(on_world);
  CHECK(ran != "hier");
  CHECK(ran != "");
  require_every_shard(y, 12, n, 78);
}

namespace {

// What coll-probe's estimate last saw (tests/comm/plugins/topology_probe.cpp).
struct Seen {
  int32_t group_size = 0;
  std::vector<int32_t> world_rank = std::vector<int32_t>(16);
  std::vector<int32_t> node = std::vector<int32_t>(16);
  std::vector<double> transfer_from_0 = std::vector<double>(16);
};

Seen probe_seen() {
  const std::string file =
      (std::filesystem::path(TESSERA_COMM_TEST_PLUGIN_DIR) / "libtessera-coll-probe.so").string();
  void* library = ::dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(library != nullptr);
  void* symbol = ::dlsym(library, "topology_probe_seen");
  REQUIRE(symbol != nullptr);
  Seen seen;
  seen.group_size = reinterpret_cast<int32_t (*)(int32_t*, int32_t*, double*, int32_t)>(symbol)(
      seen.world_rank.data(), seen.node.data(), seen.transfer_from_0.data(), 16);
  ::dlclose(library);
  return seen;
}

}  // namespace

TEST_CASE("a plugin algorithm's estimate is shown the mesh's topology: node domains and transfer times") {
  ensure_loaded("coll-probe");
  ScopedTopology preset("");
  ScopedRules rules("all_reduce:auto");  // probe estimates 0 s: auto asks every estimate and takes it
  // Two nodes of four ranks: fast links inside a node, one slow link between ranks 0 and 4.
  constexpr double kIntraBandwidth = 200e9, kIntraLatency = 1e-6;
  constexpr double kInterBandwidth = 5e9, kInterLatency = 50e-6;
  std::vector<ts::Link> links;
  for (int node = 0; node < 2; ++node)
    for (int a = 4 * node; a < 4 * node + 4; ++a)
      for (int b = a + 1; b < 4 * node + 4; ++b) links.push_back({a, b, kIntraBandwidth, kIntraLatency});
  links.push_back({0, 4, kInterBandwidth, kInterLatency});
  const ts::Topology two_nodes = ts::Topology::custom(8, links, "two nodes")
                                     .with_locality(ts::Topology::kLocalityNode, {0, 0, 0, 0, 1, 1, 1, 1});
  ts::LocalMode mode(8);
  const ts::DeviceMesh plain = ts::init_device_mesh("cpu", {8});
  const ts::DeviceMesh mesh = plain.with_topology(two_nodes);
  const int64_t n = 256;

  const double bytes = static_cast<double>(kMiB);  // the probe asks for 1 MiB transfers
  const double intra = kIntraLatency + bytes / kIntraBandwidth;
  const double inter = kInterLatency + bytes / kInterBandwidth;
  {
    ts::Tensor x = counting(8, n);
    ts::CommCounter counter;
    ts::dist::all_reduce(x, ts::ReduceOp::SUM, mesh.get_group());
    CHECK(algorithm_seen(counter) == "probe");
    require_every_shard(x, 8, n, 36);
    const Seen seen = probe_seen();
    REQUIRE(seen.group_size == 8);
    for (int g = 0; g < 8; ++g) {
      CAPTURE(g);
      CHECK(seen.world_rank[static_cast<size_t>(g)] == g);
      CHECK(seen.node[static_cast<size_t>(g)] == g / 4);
      // Same node: one fast link; rank 4: the slow link; ranks 5..7: the slow link, then a fast one.
      const double want = g == 0 ? 0.0 : g < 4 ? intra : g == 4 ? inter : inter + intra;
      CHECK(seen.transfer_from_0[static_cast<size_t>(g)] == doctest::Approx(want).epsilon(1e-12));
    }
  }
  {
    // The world's preset (fully connected, no domains) on the same ranks.
    ts::Tensor x = counting(8, n);
    ts::dist::all_reduce(x, ts::ReduceOp::SUM, plain.get_group());
    require_every_shard(x, 8, n, 36);
    const Seen seen = probe_seen();
    REQUIRE(seen.group_size == 8);
    for (int g = 1; g < 8; ++g) {
      CAPTURE(g);
      CHECK(seen.node[static_cast<size_t>(g)] == -1);
      CHECK(seen.transfer_from_0[static_cast<size_t>(g)] ==
            doctest::Approx(kPresetLatency + bytes / kPresetBandwidth).epsilon(1e-12));
    }
  }
  ts::unload_plugin("coll-probe");
}

TEST_CASE("DTensor redistribution over a mesh with a topology runs on it, as do its sub-meshes' groups") {
  ScopedTopology preset("");
  ScopedRules rules("all_reduce:ring");
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4}).with_topology(zigzag());
  const int64_t n = 1 << 12;
  const ts::DTensor partial = ts::from_local(counting(4, n), mesh, {ts::Placement::partial()});
  ts::CommCounter counter;
  const ts::DTensor replicated = partial.redistribute(mesh, {ts::Placement::replicate()});
  CHECK(counter.calls("all_reduce") == 1);
  CHECK(counter.seconds() ==
        doctest::Approx(ring_all_reduce_seconds(4, 4.0 * n, kZigzagLatency, kZigzagBandwidth)).epsilon(1e-9));
  require_every_shard(replicated.to_local(), 4, n, 10);

  // Sub-meshes and flattened meshes keep the topology, and so do their groups.
  const ts::DeviceMesh square = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"}).with_topology(zigzag());
  for (const ts::DeviceMesh& part : {square["tp"], square["dp"], square.flatten()}) {
    CAPTURE(part.to_string());
    REQUIRE(part.get_group().topology() != nullptr);
    CHECK(part.get_group().topology()->fingerprint() == zigzag().fingerprint());
  }
  CHECK(square.get_group("dp").topology() != nullptr);
}

TEST_CASE("a group's topology must hold its ranks, and groups compare their topologies by content") {
  CHECK_THROWS_WITH_AS(
      ts::ProcessGroup({0, 5}).with_topology(std::make_shared<const ts::Topology>(ts::Topology::ring(4))),
      doctest::Contains("topology 'ring' spans 4 ranks (0..3) but the group holds rank 5"), ts::Error);
  // The default group's ranks are known at the call only: checked there.
  ts::LocalMode mode(4);
  ts::Tensor x = counting(4, 8);
  const ts::ProcessGroup small =
      ts::ProcessGroup().with_topology(std::make_shared<const ts::Topology>(ts::Topology::ring(2)));
  CHECK_THROWS_WITH_AS(
      ts::dist::all_reduce(x, ts::ReduceOp::SUM, small),
      doctest::Contains("the group's topology 'ring' spans 2 ranks (0..1) but the collective runs on "
                        "rank 3"),
      ts::Error);

  const ts::ProcessGroup plain({0, 1, 2, 3});
  const auto ring = std::make_shared<const ts::Topology>(ts::Topology::ring(4));
  CHECK(plain.with_topology(ring) ==
        plain.with_topology(std::make_shared<const ts::Topology>(ts::Topology::ring(4))));
  CHECK_FALSE(plain.with_topology(ring) == plain);
  CHECK_FALSE(plain.with_topology(ring) ==
              plain.with_topology(std::make_shared<const ts::Topology>(zigzag())));
  CHECK(plain.with_topology(ring).with_topology(nullptr) == plain);
}
