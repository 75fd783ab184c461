// Locality domains of a Topology (SDK 1.3) and how a collective request shows them to plugins:
// group ranks mapped to world ranks, -1 where nothing is stated, transfer times along the topology.
#include <doctest/doctest.h>

#include <cmath>
#include <tessera/tessera.hpp>
#include <vector>

#include "comm/request_topology.hpp"
#include "comm/run_collective.hpp"
#include "tessera/sdk/cpp/algorithm_builder.hpp"

namespace ts = tessera;

TEST_CASE("nodes:K states the node of every rank, other presets state no domains") {
  const ts::Topology nodes = ts::Topology::nodes(12, 4);
  for (int r = 0; r < 12; ++r) {
    CHECK(nodes.locality(r, ts::Topology::kLocalityNode) == r / 4);
    CHECK(nodes.locality(r, ts::Topology::kLocalityNuma) == -1);
    CHECK(nodes.locality(r, ts::Topology::kLocalitySwitch) == -1);
  }
  CHECK(ts::Topology::preset("nodes:3", 6).locality(5, TESSERA_LOCALITY_NODE) == 1);
  for (const ts::Topology& t :
       {ts::Topology::fully_connected(8), ts::Topology::ring(8), ts::Topology::torus_2d(2, 4)})
    for (int level = 0; level < ts::Topology::kLocalityLevels; ++level) CHECK(t.locality(3, level) == -1);
  // Out of range reads as "not stated": plugins ask through the C ABI.
  CHECK(nodes.locality(12, 1) == -1);
  CHECK(nodes.locality(-1, 1) == -1);
  CHECK(nodes.locality(0, 3) == -1);
}

TEST_CASE("with_locality states one level of a copy and checks its ids") {
  const ts::Topology ring = ts::Topology::ring(4);
  const ts::Topology numa = ring.with_locality(ts::Topology::kLocalityNuma, {0, 0, 1, -1});
  CHECK(numa.locality(2, ts::Topology::kLocalityNuma) == 1);
  CHECK(numa.locality(3, ts::Topology::kLocalityNuma) == -1);
  CHECK(ring.locality(2, ts::Topology::kLocalityNuma) == -1);  // the original is unchanged
  const ts::Topology both = numa.with_locality(ts::Topology::kLocalitySwitch, {7, 7, 7, 7});
  CHECK(both.locality(0, ts::Topology::kLocalityNuma) == 0);
  CHECK(both.locality(0, ts::Topology::kLocalitySwitch) == 7);
  CHECK(both.transfer_time(0, 2, 1000) == ring.transfer_time(0, 2, 1000));
  CHECK_THROWS_WITH_AS(ring.with_locality(3, {0, 0, 0, 0}),
                       doctest::Contains("locality level 3 is not one of"), ts::Error);
  CHECK_THROWS_WITH_AS(ring.with_locality(1, {0, 0, 0}),
                       doctest::Contains("locality level 1 has 3 ids for a world of 4 ranks"), ts::Error);
  CHECK_THROWS_WITH_AS(ring.with_locality(1, {0, -2, 0, 0}), doctest::Contains("gives rank 1 the id -2"),
                       ts::Error);
}

TEST_CASE("fingerprints: equal for the same construction, different when links or domains differ") {
  CHECK(ts::Topology::nodes(8, 4).fingerprint() == ts::Topology::preset("nodes:4", 8).fingerprint());
  CHECK(ts::Topology::fully_connected(8).fingerprint() == ts::Topology::fully_connected(8).fingerprint());
  CHECK(ts::Topology::nodes(8, 4).fingerprint() != ts::Topology::nodes(8, 2).fingerprint());
  CHECK(ts::Topology::fully_connected(8).fingerprint() != ts::Topology::fully_connected(9).fingerprint());
  CHECK(ts::Topology::fully_connected(8).fingerprint() !=
        ts::Topology::fully_connected(8, 50e9).fingerprint());
  CHECK(ts::Topology::ring(8).fingerprint() != ts::Topology::fully_connected(8).fingerprint());
  const ts::Topology ring = ts::Topology::ring(4);
  CHECK(ring.with_locality(1, {0, 0, 1, 1}).fingerprint() != ring.fingerprint());
  CHECK(ring.with_locality(1, {0, 0, 1, 1}).fingerprint() !=
        ring.with_locality(1, {0, 1, 1, 1}).fingerprint());
  CHECK(ring.with_locality(1, {0, 0, 1, 1}).fingerprint() !=
        ring.with_locality(0, {0, 0, 1, 1}).fingerprint());
  CHECK(ring.with_locality(1, {0, 0, 1, 1}).fingerprint() ==
        ring.with_locality(1, {0, 0, 1, 1}).fingerprint());
}

TEST_CASE("a request maps group ranks to world ranks for locality and transfer_time") {
  const ts::Topology topology = ts::Topology::nodes(8, 4);
  const std::vector<int> members = {5, 4, 0, 3};  // group rank i is world rank members[i]
  tessera_collective_request request =
      ts::comm::make_request(TESSERA_COLL_ALL_REDUCE, 4, 16, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  CHECK_FALSE(tessera::sdk::has_topology(request));
  CHECK(tessera::sdk::locality(request, 0, TESSERA_LOCALITY_NODE) == -1);
  CHECK(tessera::sdk::world_rank(request, 2) == 2);
  CHECK(std::isnan(tessera::sdk::transfer_time(request, 0, 1, 8)));

  const ts::comm::RequestTopology where{&topology, members.data(), 4};
  ts::comm::attach_topology(request, where);
  REQUIRE(tessera::sdk::has_topology(request));
  CHECK(ts::comm::topology_of(request) == &where);
  const std::vector<int32_t> nodes = {1, 1, 0, 0};
  for (int32_t g = 0; g < 4; ++g) {
    CHECK(request.group_ranks[g] == members[static_cast<size_t>(g)]);
    CHECK(tessera::sdk::world_rank(request, g) == members[static_cast<size_t>(g)]);
    CHECK(tessera::sdk::locality(request, g, TESSERA_LOCALITY_NODE) == nodes[static_cast<size_t>(g)]);
    CHECK(tessera::sdk::locality(request, g, TESSERA_LOCALITY_NUMA) == -1);
  }
  // Group 0 -> 2 is world 5 -> 0: two hops (an inter-node link and an intra-node one).
  CHECK(tessera::sdk::transfer_time(request, 0, 2, 1 << 20) == topology.transfer_time(5, 0, 1 << 20));
  CHECK(tessera::sdk::transfer_time(request, 0, 2, 1 << 20) > topology.transfer_time(5, 4, 1 << 20));
  CHECK(tessera::sdk::transfer_time(request, 1, 1, 64) == 0.0);
  // Outside the group: "not stated" and NaN, never an exception through the C ABI.
  CHECK(request.locality(request.topology, 4, TESSERA_LOCALITY_NODE) == -1);
  CHECK(std::isnan(request.transfer_time(request.topology, 0, 4, 8)));
  CHECK(std::isnan(request.transfer_time(request.topology, -1, 0, 8)));
  CHECK(std::isnan(request.transfer_time(request.topology, 0, 1, -8)));
}

TEST_CASE("a disconnected topology reports an infinite transfer time") {
  const ts::Topology split = ts::Topology::custom(4, {{0, 1, 1e9, 1e-6}, {2, 3, 1e9, 1e-6}});
  const std::vector<int> members = {0, 1, 2, 3};
  tessera_collective_request request =
      ts::comm::make_request(TESSERA_COLL_ALL_REDUCE, 4, 16, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  const ts::comm::RequestTopology where{&split, members.data(), 4};
  ts::comm::attach_topology(request, where);
  CHECK(std::isinf(tessera::sdk::transfer_time(request, 0, 3, 8)));
  CHECK(std::isfinite(tessera::sdk::transfer_time(request, 0, 1, 8)));
}
