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

TEST_CASE("messages sharing a link: direct broadcast on a ring of 5, by hand") {
  Settings settings;
  ts::set_default_topology("ring");
  ts::dist::set_algorithms("*:direct");
  // Rank 0 sends to 1, 2, 3, 4 at once. 0->1 and 0->4 are direct; 0->2 goes 0-1-2 and 0->3 goes
  // 0-4-3, so links 0->1 and 0->4 each carry two messages for their whole time: each moves at half
  // the bandwidth. The farthest arrive after two such hops.
  const int64_t n = 1 << 14;
  const double bytes = 4.0 * n;
  ts::Tensor t = ones_on(5, n);
  ts::CommCounter counter;
  ts::dist::broadcast(t, 0);
  CHECK(counter.seconds() == doctest::Approx(2 * (kLatency + 2 * bytes / kBandwidth)).epsilon(1e-12));
  CHECK(counter.bytes_per_rank() == static_cast<int64_t>(4 * bytes));
}

TEST_CASE("cost estimates do not change when paths come from the cache or another world") {
  Settings settings;
  ts::set_default_topology("ring");
  ts::dist::set_algorithms("*:direct");
  auto estimate = [] {
    ts::Tensor t = ts::rank_map([](int r) { return ts::full({1000}, static_cast<float>(r)); });
    ts::CommCounter counter;
    ts::dist::all_reduce(t);
    ts::dist::broadcast(t, 3);
    return std::make_pair(counter.seconds(), counter.bytes_per_rank());
  };
  ts::LocalMode mode(7);
  const auto uncached = estimate();  // a new world: its topology computes every path
  CHECK(uncached.first > 0);
  CHECK(estimate() == uncached);  // the same world: cached paths
  ts::LocalMode other(7);
  CHECK(estimate() == uncached);  // another world, computed afresh
}

TEST_CASE("a sparse rank set {0, 1, 3000} runs collectives under a counter like {0, 1, 2}") {
  Settings settings;
  // The world is 3001 ranks; the default (fully connected) topology over it is implicit, so this is
  // as cheap as three ranks, and on equal links rank ids do not change the estimate.
  auto run = [](const ts::RankSet& ranks) {
    ts::LocalMode mode(ranks);
    ts::Tensor t = ts::ones({256});
    ts::CommCounter counter;
    ts::dist::all_reduce(t);
    for (int r : ranks) CHECK(t.shard(r).to_vector<float>() == std::vector<float>(256, 3.0f));
    CHECK(counter.calls("all_reduce") == 1);
    return std::make_pair(counter.seconds(), counter.bytes_per_rank());
  };
  const auto dense = run(ts::RankSet{0, 1, 2});
  CHECK(dense.first > 0);
  CHECK(run(ts::RankSet{0, 1, 3000}) == dense);
  // On a ring of 3001 ranks rank 3000 is next to rank 0, and 1 -> 3000 goes through 0. Direct
  // all_reduce sends every buffer to every other rank at once: 1 -> 3000 shares link 1->0 with
  // 1 -> 0 and link 0->3000 with 0 -> 3000, so it takes two hops at half the bandwidth.
  ts::set_default_topology("ring");
  ts::dist::set_algorithms("*:direct");
  ts::LocalMode mode(ts::RankSet{0, 1, 3000});
  ts::Tensor t = ts::ones({256});
  ts::CommCounter counter;
  ts::dist::all_reduce(t);
  CHECK(counter.calls("all_reduce") == 1);
  const double bytes = 4.0 * 256;
  CHECK(counter.seconds() == doctest::Approx(2 * (kLatency + 2 * bytes / kBandwidth)).epsilon(1e-12));
}
