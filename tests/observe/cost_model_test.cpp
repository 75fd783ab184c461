// The cost model against hand-computed alpha-beta figures, through CommCounter.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

// Restores algorithm rules and topology after a test.
struct Settings {
  Settings() : rules(ts::dist::algorithms()) {}
  ~Settings() {
    ts::dist::set_algorithms(rules);
    ts::set_default_topology("");
  }
  std::string rules;
};

ts::Tensor ones_on(int ranks, int64_t n) {
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < ranks; ++r) shards.emplace_back(r, ts::ones({n}));
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
}

// Topology::ring's defaults.
constexpr double kBandwidth = 100e9;
constexpr double kLatency = 2e-6;

}  // namespace

TEST_CASE("ring all_reduce on a ring topology: 2(p-1) steps of N/p bytes") {
  Settings settings;
  ts::set_default_topology("ring");
  ts::dist::set_algorithms("all_reduce:ring;*:direct");
  for (int p : {2, 4, 8}) {
    const int64_t n = 1 << 16;  // float32 elements, divisible by p
    const double bytes = 4.0 * n;
    ts::Tensor t = ones_on(p, n);
    ts::CommCounter counter;
    ts::dist::all_reduce(t);
    const double expected = 2.0 * (p - 1) * (kLatency + bytes / p / kBandwidth);
    CAPTURE(p);
    CHECK(counter.seconds() == doctest::Approx(expected).epsilon(1e-9));
    CHECK(counter.bytes_per_rank() == static_cast<int64_t>(2.0 * (p - 1) * bytes / p));
    CHECK(counter.calls("all_reduce") == 1);
    REQUIRE(counter.entries().size() == 1);
    CHECK(counter.entries()[0].algorithm == "ring");
  }
}

TEST_CASE("multi-hop paths and shared links cost more") {
  Settings settings;
  ts::set_default_topology("ring");
  // Broadcast from rank 0 to 3 on a ring of 6 with the direct algorithm: rank 0 sends to all five
  // others at once. Rank 3 is three hops away; the links next to rank 0 carry several messages.
  ts::dist::set_algorithms("*:direct");
  const int64_t n = 1 << 14;
  const double bytes = 4.0 * n;
  ts::Tensor t = ones_on(6, n);
  ts::CommCounter counter;
  ts::dist::broadcast(t, 0);
  const double uncontended_farthest = 3 * (kLatency + bytes / kBandwidth);
  CHECK(counter.seconds() > uncontended_farthest);  // shared first hops slow it down
  CHECK(counter.bytes_per_rank() == static_cast<int64_t>(5 * bytes));
  // A tree broadcast sends each byte fewer times over the first links: it is faster here.
  ts::dist::set_algorithms("broadcast:tree;*:direct");
  ts::CommCounter tree;
  ts::dist::broadcast(t, 0);
  CHECK(tree.seconds() < counter.seconds());
}

TEST_CASE("nodes topology: a group inside a node is cheaper than one across nodes") {
  Settings settings;
  ts::set_default_topology("nodes:4");
  ts::dist::set_algorithms("*:direct");
  ts::Tensor t = ones_on(8, 1 << 12);
  auto time_of = [&](const ts::ProcessGroup& group) {
    ts::CommCounter counter;
    ts::dist::all_reduce(t, ts::ReduceOp::SUM, group);
    return counter.seconds();
  };
  const double bytes = 4.0 * (1 << 12);
  // Direct all_reduce of two ranks: one message each way, at the same time on a full-duplex link.
  CHECK(time_of(ts::ProcessGroup({0, 1})) == doctest::Approx(1e-6 + bytes / 300e9).epsilon(1e-9));
  CHECK(time_of(ts::ProcessGroup({0, 4})) == doctest::Approx(10e-6 + bytes / 25e9).epsilon(1e-9));
}
