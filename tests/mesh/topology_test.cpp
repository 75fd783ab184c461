// Topology: presets, alpha-beta paths and times computed by hand, ring order, preset text and
// every error.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

bool linked(const ts::Topology& topology, int a, int b) {
  for (const ts::Link& link : topology.links())
    if ((link.a == a && link.b == b) || (link.a == b && link.b == a)) return true;
  return false;
}

// Restores the process-wide default topology after a test changes it.
struct SavedDefault {
  ~SavedDefault() { ts::set_default_topology(""); }
};

}  // namespace

TEST_CASE("fully connected: every pair linked, one hop") {
  const ts::Topology t = ts::Topology::fully_connected(5, 10e9, 3e-6);
  CHECK(t.world() == 5);
  CHECK(t.name() == "fully_connected");
  CHECK(t.links().size() == 10);
  CHECK(t.path(1, 4) == std::vector<int>{1, 4});
  CHECK(t.transfer_time(1, 4, 1000) == doctest::Approx(3e-6 + 1000 / 10e9));
  CHECK(t.transfer_time(2, 2, 1000) == 0.0);
  CHECK(t.path(2, 2) == std::vector<int>{2});
}

TEST_CASE("ring of 6: paths go the short way round, time per hop") {
  const double bandwidth = 50e9, latency = 4e-6;
  const ts::Topology t = ts::Topology::ring(6, bandwidth, latency);
  CHECK(t.links().size() == 6);
  CHECK(t.path(0, 1) == std::vector<int>{0, 1});
  CHECK(t.path(0, 5) == std::vector<int>{0, 5});
  CHECK(t.path(0, 2) == std::vector<int>{0, 1, 2});
  CHECK(t.path(1, 5) == std::vector<int>{1, 0, 5});
  const std::vector<int> half = t.path(0, 3);  // two equally short ways; either is 3 hops
  CHECK(half.size() == 4);
  CHECK(half.front() == 0);
  CHECK(half.back() == 3);
  const int64_t bytes = 1 << 20;
  CHECK(t.transfer_time(0, 3, bytes) == doctest::Approx(3 * (latency + bytes / bandwidth)));
  CHECK(t.transfer_time(4, 0, bytes) == doctest::Approx(2 * (latency + bytes / bandwidth)));
  CHECK(t.transfer_time(0, 1, 0) == doctest::Approx(latency));
}

TEST_CASE("small rings: no self links, no repeated links") {
  CHECK(ts::Topology::ring(1).links().empty());
  CHECK(ts::Topology::ring(2).links().size() == 1);
  CHECK(ts::Topology::ring(3).links().size() == 3);
}

TEST_CASE("torus 3x4: four neighbours with wrap-around") {
  const ts::Topology t = ts::Topology::torus_2d(3, 4);
  CHECK(t.world() == 12);
  CHECK(t.name() == "torus:3x4");
  CHECK(t.links().size() == 24);  // 2 per rank
  // Rank 5 = (1, 1): left 4, right 6, up 1, down 9.
  for (int n : {4, 6, 1, 9}) CHECK(linked(t, 5, n));
  CHECK_FALSE(linked(t, 5, 0));
  CHECK_FALSE(linked(t, 5, 10));
  // Rank 0 = (0, 0) wraps to 3 (left) and 8 (up).
  for (int n : {1, 3, 4, 8}) CHECK(linked(t, 0, n));
  CHECK(t.path(0, 11).size() == 3);  // (0,0) -> (2,3): one wrap each way
  CHECK(t.path(0, 6).size() == 4);   // (0,0) -> (1,2): 1 + 2 hops
  // 2 rows: up and down are the same rank, one link.
  CHECK(ts::Topology::torus_2d(2, 2).links().size() == 4);
}

TEST_CASE("nodes:4 on 8 ranks: fast inside a node, slow between same local index") {
  const double intra_bw = 300e9, intra_lat = 1e-6, inter_bw = 25e9, inter_lat = 10e-6;
  const ts::Topology t = ts::Topology::nodes(8, 4, intra_bw, intra_lat, inter_bw, inter_lat);
  CHECK(t.name() == "nodes:4");
  CHECK(t.links().size() == 6 + 6 + 4);
  CHECK(linked(t, 1, 5));
  CHECK_FALSE(linked(t, 1, 6));
  const int64_t bytes = 1 << 20;
  CHECK(t.transfer_time(0, 3, bytes) == doctest::Approx(intra_lat + bytes / intra_bw));
  CHECK(t.transfer_time(2, 6, bytes) == doctest::Approx(inter_lat + bytes / inter_bw));
  // 1 -> 6: across once and one hop inside a node, whichever side the inside hop is on.
  CHECK(t.path(1, 6).size() == 3);
  CHECK(t.transfer_time(1, 6, bytes) ==
        doctest::Approx(inter_lat + bytes / inter_bw + intra_lat + bytes / intra_bw));
}

TEST_CASE("path choice depends on the message size") {
  // 0-1 direct: low latency, low bandwidth. 0-2-1: higher latency, high bandwidth.
  const ts::Topology t = ts::Topology::custom(3, {{0, 1, 1e6, 1e-6}, {0, 2, 1e9, 1e-3}, {2, 1, 1e9, 1e-3}});
  CHECK(t.path(0, 1, 0) == std::vector<int>{0, 1});
  CHECK(t.path(0, 1, 1'000'000) == std::vector<int>{0, 2, 1});
  CHECK(t.transfer_time(0, 1, 1'000'000) == doctest::Approx(2 * (1e-3 + 1e-3)));
  CHECK(t.transfer_time(0, 1, 0) == doctest::Approx(1e-6));
}

TEST_CASE("ring order: natural for equal links") {
  const std::vector<int> ranks{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(ts::Topology::fully_connected(8).ring_order(ranks) == ranks);
  CHECK(ts::Topology::ring(8).ring_order(ranks) == ranks);
  CHECK(ts::Topology::fully_connected(8).ring_order({5, 2, 7, 1}) == std::vector<int>{5, 1, 2, 7});
  CHECK(ts::Topology::ring(4).ring_order({}).empty());
}

TEST_CASE("ring order on nodes groups ranks by node") {
  const ts::Topology t = ts::Topology::nodes(8, 4);
  CHECK(t.ring_order({0, 4, 1, 5, 2, 6, 3, 7}) == std::vector<int>{0, 1, 2, 3, 7, 4, 5, 6});
  // Hand check: from 3 the only one-hop ranks left are 7 (inter link); then node 1 in order.
}

TEST_CASE("preset text") {
  CHECK(ts::Topology::preset("fully_connected", 4).links().size() == 6);
  CHECK(ts::Topology::preset("ring", 4).name() == "ring");
  CHECK(ts::Topology::preset("torus:2x4", 8).name() == "torus:2x4");
  CHECK(ts::Topology::preset("nodes:4", 8).name() == "nodes:4");
}

TEST_CASE("preset errors name the text and the accepted forms") {
  for (const char* text :
       {"star", "torus:3", "torus:0x4", "torus:2x", "nodes:", "nodes:0", "nodes:x", "ring "}) {
    CAPTURE(text);
    try {
      ts::Topology::preset(text, 8);
      FAIL("expected a ConfigError");
    } catch (const ts::ConfigError& e) {
      const std::string what = e.what();
      CHECK(what.find(std::string("'") + text + "'") != std::string::npos);
      CHECK(what.find("torus:RxC") != std::string::npos);
      CHECK(what.find("nodes:K") != std::string::npos);
    }
  }
  CHECK_THROWS_WITH_AS(ts::Topology::preset("torus:2x3", 8), doctest::Contains("torus:2x3"), ts::ConfigError);
  CHECK_THROWS_WITH_AS(ts::Topology::preset("nodes:3", 8), doctest::Contains("does not divide"),
                       ts::ConfigError);
}

TEST_CASE("link and rank errors") {
  CHECK_THROWS_WITH_AS(ts::Topology::custom(2, {{0, 1, 0.0, 1e-6}}),
                       doctest::Contains("bandwidth must be positive"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Topology::custom(2, {{0, 1, -5.0, 1e-6}}), doctest::Contains("bandwidth"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::Topology::custom(2, {{0, 1, 1e9, -1e-6}}),
                       doctest::Contains("latency must be non-negative"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Topology::custom(2, {{0, 2, 1e9, 1e-6}}), doctest::Contains("rank 2"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Topology::custom(2, {{1, 1, 1e9, 1e-6}}), doctest::Contains("itself"), ts::Error);
  CHECK_THROWS_AS(ts::Topology::ring(0), ts::Error);
  CHECK_THROWS_AS(ts::Topology::nodes(8, 3), ts::Error);
  const ts::Topology ring = ts::Topology::ring(4);
  CHECK_THROWS_WITH_AS(ring.path(0, 4), doctest::Contains("rank 4"), ts::Error);
  CHECK_THROWS_WITH_AS(ring.transfer_time(-1, 0, 8), doctest::Contains("rank -1"), ts::Error);
  CHECK_THROWS_WITH_AS(ring.ring_order({0, 1, 1}), doctest::Contains("rank 1 appears twice"), ts::Error);
}

TEST_CASE("disconnected custom graph: a path between components names both ranks") {
  const ts::Topology t = ts::Topology::custom(4, {{0, 1, 1e9, 1e-6}, {2, 3, 1e9, 1e-6}}, "islands");
  CHECK(t.path(0, 1) == std::vector<int>{0, 1});
  CHECK_THROWS_WITH_AS(t.path(1, 3), doctest::Contains("no path from rank 1 to rank 3"), ts::Error);
  CHECK_THROWS_WITH_AS(t.transfer_time(2, 0, 64), doctest::Contains("no path from rank 2 to rank 0"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(t.ring_order({0, 1, 2}), doctest::Contains("no path from rank 1 to rank 2"),
                       ts::Error);
}

TEST_CASE("default topology: fully connected unless set") {
  SavedDefault restore;
  CHECK(ts::default_topology(4).name() == "fully_connected");
  ts::set_default_topology("ring");
  CHECK(ts::default_topology(6).name() == "ring");
  CHECK(ts::default_topology(6).world() == 6);
  ts::set_default_topology("nodes:2");
  CHECK(ts::default_topology(8).name() == "nodes:2");
  CHECK_THROWS_AS(ts::default_topology(5), ts::ConfigError);
  CHECK_THROWS_WITH_AS(ts::set_default_topology("mesh"), doctest::Contains("'mesh'"), ts::ConfigError);
  CHECK(ts::default_topology(8).name() == "nodes:2");  // a rejected preset leaves the default alone
  ts::set_default_topology("");
  CHECK(ts::default_topology(4).name() == "fully_connected");
}

TEST_CASE("the topology preset comes from the configuration file") {
  tessera::Config config = tessera::Config::from_string("[topology]\npreset = \"ring\"\n", "t.toml");
  CHECK(config.topology == "ring");
  config.topology = "donut";
  CHECK_THROWS_WITH_AS(tessera::configure(config), doctest::Contains("[topology] preset"),
                       tessera::ConfigError);
  tessera::set_default_topology("");
}

TEST_CASE("shortest paths are computed once per (source, message size) and shared by copies") {
  const ts::Topology ring = ts::Topology::ring(8);
  CHECK(ring.shortest_path_trees() == 0);
  // Every pair, twice: one tree per source for this size, however many paths ask.
  for (int round = 0; round < 2; ++round)
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 8; ++b) ring.path(a, b, 1000);
  CHECK(ring.shortest_path_trees() == 8);  // one per source
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization): a copy shares the trees
  const ts::Topology copy = ring;
  CHECK(copy.path(3, 6, 1000) == std::vector<int>{3, 4, 5, 6});
  CHECK(copy.shortest_path_trees() == 8);
  copy.path(3, 7, 2000);  // another size: another tree
  CHECK(ring.shortest_path_trees() == 9);
  // A fresh topology of the same shape computes afresh and agrees with the cached one.
  const ts::Topology fresh = ts::Topology::ring(8);
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      CHECK(fresh.path(a, b, 1000) == ring.path(a, b, 1000));
      CHECK(fresh.transfer_time(a, b, 1000) == ring.transfer_time(a, b, 1000));
    }
}

TEST_CASE("a fully connected topology over thousands of ranks is implicit") {
  const ts::Topology big = ts::Topology::fully_connected(3001, 10e9, 3e-6);
  CHECK(big.world() == 3001);
  CHECK(big.path(0, 3000, 1 << 20) == std::vector<int>{0, 3000});
  CHECK(big.link(1, 3000).bandwidth == 10e9);
  CHECK(big.transfer_time(3000, 1, 1000) == doctest::Approx(3e-6 + 1000 / 10e9));
  CHECK(big.ring_order({3000, 1, 0}) == std::vector<int>{3000, 0, 1});
  CHECK(big.shortest_path_trees() == 0);  // every path is the direct link: no search
  CHECK(ts::default_topology(3001).path(2999, 3000) == std::vector<int>{2999, 3000});
}
