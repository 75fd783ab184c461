// Schedules and their costs are kept per shape of group where the topology cannot tell groups
// apart (Topology::uniform: equal links everywhere, no locality), and per group elsewhere. Results
// come from sums computed here; costs from the alpha-beta formula of a ring over equal links.
#include <cstdint>
#include <vector>

#include "comm/request_topology.hpp"
#include "comm/run_collective.hpp"
#include "comm_plugin_support.hpp"

using namespace comm_test;

namespace {

// Topology::fully_connected's defaults.
constexpr double kBandwidth = 100e9;
constexpr double kLatency = 2e-6;

// The ring all_gather of `bytes` in all (each rank contributes bytes / p) over p ranks joined by
// equal direct links: p - 1 steps, each moving one rank's block over one link.
double ring_all_gather_seconds(int p, double bytes) { return (p - 1) * (kLatency + bytes / p / kBandwidth); }

// The cached ring all_gather schedule of `members` over `topology` (p = members.size(), 8
// float32 elements per rank), as a collective asks for it.
std::shared_ptr<const ts::comm::Schedule> ring_schedule(const ts::Topology& topology,
                                                        std::vector<int> members) {
  const int p = static_cast<int>(members.size());
  tessera_collective_request request =
      ts::comm::make_request(TESSERA_COLL_ALL_GATHER, p, 8 * p, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  const ts::comm::RequestTopology where{&topology, members.data(), p};
  ts::comm::attach_topology(request, where);
  return ts::comm::cached_schedule("ring", request);
}

}  // namespace

TEST_CASE("uniform: the fully connected preset only, and not once it states a locality") {
  CHECK(ts::Topology::fully_connected(8).uniform());
  CHECK(ts::Topology::preset("fully_connected", 8).uniform());
  CHECK(ts::Topology::fully_connected(8, 10e9, 1e-6).uniform());  // other equal links are still equal
  CHECK_FALSE(ts::Topology::fully_connected(8)
                  .with_locality(ts::Topology::kLocalityNode, {0, 0, 0, 0, 1, 1, 1, 1})
                  .uniform());
  CHECK_FALSE(ts::Topology::ring(8).uniform());
  CHECK_FALSE(ts::Topology::torus_2d(2, 4).uniform());
  CHECK_FALSE(ts::Topology::nodes(8, 4).uniform());
  // Every pair linked, but not by one kind of link.
  CHECK_FALSE(ts::Topology::custom(3, {{0, 1, 1e9, 1e-6}, {1, 2, 1e9, 1e-6}, {0, 2, 2e9, 1e-6}}).uniform());
  CHECK_FALSE(ts::Topology().uniform());
}

TEST_CASE(
    "on a uniform topology every group of one size shares one schedule, elsewhere each group has its own") {
  const ts::Topology equal = ts::Topology::fully_connected(8);
  const auto first = ring_schedule(equal, {0, 1, 2, 3});
  CHECK(ring_schedule(equal, {4, 5, 6, 7}) == first);
  CHECK(ring_schedule(equal, {7, 2, 5, 0}) == first);  // any ranks, in any order
  const auto pair = ring_schedule(equal, {0, 1});
  CHECK(pair != first);  // another size, another schedule
  CHECK(pair->group_size() == 2);
  CHECK(ring_schedule(equal, {6, 3}) == pair);
  // The same world's ranks on a ring of links: the groups are not told apart by the key's shape
  // alone there (their paths differ in general), so each keeps its own entry.
  const ts::Topology ring = ts::Topology::ring(8);
  const auto on_ring = ring_schedule(ring, {0, 1, 2, 3});
  CHECK(on_ring != first);
  CHECK(ring_schedule(ring, {4, 5, 6, 7}) != on_ring);
  CHECK(ring_schedule(ring, {0, 1, 2, 3}) == on_ring);
}

TEST_CASE("groups sharing one schedule each gather their own members' values, costed as their own") {
  ScopedTopology preset("");  // fully connected: uniform
  ScopedRules rules("all_gather:ring");
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  for (const ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
    CAPTURE(ts::dtype_name(dtype));
    const int64_t n = 1024;
    // Rank r holds n copies of r; a dp group {c, c + 2, c + 4, c + 6} gathers c, c + 2, c + 4, c + 6.
    const ts::Tensor in = per_rank(8, [&](int r) { return ts::full({n}, static_cast<double>(r)).to(dtype); });
    ts::Tensor out = per_rank(8, [&](int) { return ts::zeros({4 * n}, ts::TensorOptions(dtype)); });
    ts::CommCounter counter;
    ts::dist::all_gather_into_tensor(out, in, mesh.get_group("dp"));
    REQUIRE(counter.entries().size() == 1);
    CHECK(counter.entries()[0].collective == "all_gather");
    CHECK(counter.entries()[0].algorithm == "ring");
    for (int r = 0; r < 8; ++r) {
      CAPTURE(r);
      const int column = r % 2;
      const ts::DisabledLocalMode plain;  // the expected value is one plain tensor
      std::vector<ts::Tensor> blocks;
      for (int k = 0; k < 4; ++k)
        blocks.push_back(ts::full({n}, static_cast<double>(column + 2 * k)).to(dtype));
      CHECK(ts::equal(out.shard(r), ts::cat(blocks, 0)));
    }
    // Both fibres run at once: the call costs one ring over four ranks of this dtype's bytes.
    const double bytes = 4.0 * static_cast<double>(n) * static_cast<double>(ts::itemsize(dtype));
    CHECK(counter.seconds() == doctest::Approx(ring_all_gather_seconds(4, bytes)).epsilon(1e-9));
  }
}
