// The out-of-tree example examples/plugin-out-of-tree/hier_all_reduce.cpp ("hier", plugin
// coll-hier), built here as a test plugin: its all_reduce against references computed here, its
// node grouping (request locality, else the group_size parameter), its check and its schedules.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "comm_plugin_support.hpp"

using namespace comm_test;

namespace {

// Rank r's element k: small integers (exact in float32 and int32, so every order sums them alike).
int32_t exact_value(int r, int64_t k) { return static_cast<int32_t>((r * 37 + k * 11) % 101) - 50; }

// The nodes hier must form: consecutive blocks of `node_size` group ranks (what both nodes:K and
// the group_size parameter give for group ranks = world ranks).
std::vector<std::vector<int>> blocks(int p, int node_size) {
  std::vector<std::vector<int>> nodes;
  for (int r = 0; r < p; ++r) {
    if (r % node_size == 0) nodes.emplace_back();
    nodes.back().push_back(r);
  }
  return nodes;
}

// Runs an all_reduce of `count` elements per rank with hier (and nothing else) over p ranks and
// returns every rank's result; the inputs are f(r, k).
template <class T, class F>
std::vector<std::vector<T>> hier_all_reduce(int p, int64_t count, ts::DType dtype, F&& f) {
  ts::LocalMode mode(p);
  ScopedRules rules("all_reduce:hier");
  ts::Tensor x = per_rank(p, [&](int r) {
    std::vector<T> values;
    for (int64_t k = 0; k < count; ++k) values.push_back(static_cast<T>(f(r, k)));
    return ts::from_values(values, {count}).to(dtype);
  });
  ts::CommCounter counter;
  ts::dist::all_reduce(x, ts::ReduceOp::SUM);
  CHECK(algorithm_seen(counter) == "hier");  // no silent fallback
  std::vector<std::vector<T>> out;
  for (int r = 0; r < p; ++r) out.push_back(x.shard(r).to_vector<T>());
  return out;
}

// Each case: the world, how the nodes are stated, and their size.
struct Layout {
  int p;
  std::string preset;  // "" = fully connected (no locality): the group_size parameter says
  int node_size;
};

std::vector<Layout> layouts() {
  return {{1, "", 2},        {3, "", 2},        {3, "", 4}, {7, "", 2},        {7, "", 4},
          {8, "nodes:2", 2}, {8, "nodes:4", 4}, {8, "", 3}, {6, "nodes:2", 2}, {4, "nodes:4", 4}};
}

}  // namespace

TEST_CASE(
    "hier all_reduce equals the sum of every rank's input: int32 and exact float32, uneven and empty "
    "counts") {
  ensure_loaded("coll-hier");
  for (const Layout& layout : layouts()) {
    set_plugin_parameter("coll-hier", "group_size", std::to_string(layout.node_size));
    ScopedTopology topology(layout.preset);
    for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{5}, int64_t{17}}) {
      CAPTURE(layout.p);
      CAPTURE(layout.preset);
      CAPTURE(layout.node_size);
      CAPTURE(count);
      std::vector<int32_t> want(static_cast<size_t>(count), 0);
      for (int r = 0; r < layout.p; ++r)
        for (int64_t k = 0; k < count; ++k) want[static_cast<size_t>(k)] += exact_value(r, k);
      const auto ints = hier_all_reduce<int32_t>(layout.p, count, ts::kInt32, exact_value);
      const auto floats = hier_all_reduce<float>(layout.p, count, ts::kFloat32, exact_value);
      for (int r = 0; r < layout.p; ++r) {
        CHECK(ints[static_cast<size_t>(r)] == want);
        std::vector<float> want_float(want.begin(), want.end());
        CHECK(floats[static_cast<size_t>(r)] == want_float);
      }
    }
  }
}

TEST_CASE(
    "hier reduces in its documented order: bitwise equal to an emulation, the same on every rank and run") {
  ensure_loaded("coll-hier");
  // Values whose float sums depend on the order, so that only the right order matches bitwise.
  const auto value = [](int r, int64_t k) {
    return static_cast<float>(std::sin(1.0 + r * 7.3 + k * 0.77) * 1e3);
  };
  for (const Layout& layout : layouts()) {
    set_plugin_parameter("coll-hier", "group_size", std::to_string(layout.node_size));
    ScopedTopology topology(layout.preset);
    const int64_t count = 11;
    CAPTURE(layout.p);
    CAPTURE(layout.preset);
    const auto got = hier_all_reduce<float>(layout.p, count, ts::kFloat32, value);
    const auto again = hier_all_reduce<float>(layout.p, count, ts::kFloat32, value);
    CHECK(got == again);
    // The emulation: each node's partial is its leader's input plus the members' in rank order;
    // element k lies in block b of the leaders' near-equal split, whose chain starts at leader
    // position b and adds the partials of positions b+1, b+2, ... round the ring.
    const std::vector<std::vector<int>> nodes = blocks(layout.p, layout.node_size);
    const auto l = static_cast<int64_t>(nodes.size());
    std::vector<float> want(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) {
      std::vector<float> partial;
      for (const std::vector<int>& node : nodes) {
        float sum = value(node.front(), k);
        for (size_t i = 1; i < node.size(); ++i) sum = sum + value(node[i], k);
        partial.push_back(sum);
      }
      // Block sizes: count / l, the first count % l one larger.
      int64_t b = 0;
      for (int64_t end = count / l + (count % l > 0 ? 1 : 0); end <= k;
           end += count / l + (b < count % l ? 1 : 0))
        ++b;
      float sum = partial[static_cast<size_t>(b)];
      for (int64_t step = 1; step < l; ++step) sum = partial[static_cast<size_t>((b + step) % l)] + sum;
      want[static_cast<size_t>(k)] = sum;
    }
    for (int r = 0; r < layout.p; ++r) {
      CAPTURE(r);
      CHECK(std::memcmp(got[static_cast<size_t>(r)].data(), want.data(), want.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("hier groups by the request's node locality before the group_size parameter") {
  ensure_loaded("coll-hier");
  // nodes:4 over 8 ranks with group_size 2: locality wins, so the nodes are {0..3} and {4..7}, not
  // four pairs (which would sum in another order).
  set_plugin_parameter("coll-hier", "group_size", "2");
  ScopedTopology topology("nodes:4");
  CHECK(ts::dist::verify_schedule("hier", "all_reduce", 8, 9).empty());
  const auto value = [](int r, int64_t k) { return static_cast<float>(std::sin(r * 1.9 + k * 0.31) * 1e3); };
  const auto got = hier_all_reduce<float>(8, 3, ts::kFloat32, value);
  // Two nodes of four: partials in rank order, then block b of 2 starts at leader b.
  for (int64_t k = 0; k < 3; ++k) {
    float a = value(0, k), c = value(4, k);
    for (int i = 1; i < 4; ++i) {
      a = a + value(i, k);
      c = c + value(4 + i, k);
    }
    const float want = k < 2 ? c + a : a + c;  // blocks [0, 2) and [2, 3)
    CHECK(std::memcmp(&got[0][static_cast<size_t>(k)], &want, sizeof want) == 0);
  }
}

TEST_CASE("hier's check names what is missing without locality or group_size, and the rules fall back") {
  ensure_loaded("coll-hier");
  ScopedTopology topology("");  // fully connected: no node locality
  // The parameter may have been set by an earlier case in this process: only a fresh process has
  // none, so the message is checked where the parameter is known to be unset.
  const std::string verdict = ts::dist::verify_schedule("hier", "all_reduce", 4, 8);
  if (!verdict.empty()) {
    CHECK(
        verdict ==
        "not applicable: hier needs to know the nodes: the request's topology states no node locality (use a "
        "topology such as nodes:K) and the parameter group_size is not set");
    ScopedRules rules("all_reduce:hier;*:direct");
    CHECK(ts::dist::algorithm_for("all_reduce", 4, 64) == "direct");
  }
  // Other collectives are not offered at all.
  CHECK(ts::dist::verify_schedule("hier", "broadcast", 4, 8)
            .rfind("not applicable: 'hier' does not implement", 0) == 0);
}

TEST_CASE("hier's group_size parameter is validated with a message naming it") {
  ensure_loaded("coll-hier");
  for (const std::string bad : {"0", "-3", "four", "4x", ""}) {
    CAPTURE(bad);
    try {
      set_plugin_parameter("coll-hier", "group_size", bad);
      FAIL_CHECK("group_size = '" << bad << "' was accepted");
    } catch (const std::exception& e) {
      CHECK(std::string(e.what()).find("group_size must be an integer in 1..65536, got '" + bad + "'") !=
            std::string::npos);
    }
  }
  try {
    set_plugin_parameter("coll-hier", "leaders", "2");
    FAIL_CHECK("an unknown parameter was accepted");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("unknown parameter 'leaders'; known: group_size") != std::string::npos);
  }
}

TEST_CASE(
    "hier in a process group sees its members' world ranks: nodes from their locality, in group order") {
  ensure_loaded("coll-hier");
  ScopedTopology topology("nodes:2");  // world nodes {0, 1}, {2, 3}, {4, 5}, {6, 7}
  ScopedRules rules("all_reduce:hier");
  const auto value = [](int r, int64_t k) { return static_cast<float>(std::sin(r * 2.3 + k * 0.57) * 1e3); };
  ts::LocalMode mode(8);
  ts::Tensor x = per_rank(8, [&](int r) {
    std::vector<float> values;
    for (int64_t k = 0; k < 3; ++k) values.push_back(value(r, k));
    return ts::from_values(values, {3});
  });
  // Fibre {5, 4, 1, 0}: group ranks 0, 1 on world node 2 (leader world 5), 2, 3 on world node 0
  // (leader world 1). Partials in group order, then the two leaders' ring over blocks [0, 2), [2, 3).
  ts::CommCounter counter;
  ts::dist::all_reduce(x, ts::ReduceOp::SUM, ts::ProcessGroup::from_fibres({{5, 4, 1, 0}, {7, 6, 3, 2}}));
  CHECK(algorithm_seen(counter) == "hier");
  for (const std::vector<int>& fibre : {std::vector<int>{5, 4, 1, 0}, std::vector<int>{7, 6, 3, 2}})
    for (int64_t k = 0; k < 3; ++k) {
      const float first = value(fibre[0], k) + value(fibre[1], k);
      const float second = value(fibre[2], k) + value(fibre[3], k);
      const float want = k < 2 ? second + first : first + second;
      for (int r : fibre) {
        CAPTURE(r);
        CAPTURE(k);
        const float got = x.shard(r).to_vector<float>()[static_cast<size_t>(k)];
        CHECK(std::memcmp(&got, &want, sizeof want) == 0);
      }
    }
}
