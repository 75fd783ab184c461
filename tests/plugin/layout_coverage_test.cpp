// Placement strategies whose shards do not cover a dim exactly once (every segment in bounds): the
// first layout of a (size, shards) pair checks all shards together and reports the first gap or
// overlap, naming the strategy, the size and the shard count. A correct strategy is unaffected.
#include <string>

#include "dtensor/placement_strategies.hpp"
#include "dtensor/placement_strategy.hpp"
#include "plugin_test_support.hpp"

using namespace plugin_test;

namespace {

std::shared_ptr<const tessera::dtensor::PlacementStrategy> load_placement(const std::string& name) {
  tessera::load_plugin(test_plugin(name).string());
  auto strategy = tessera::dtensor::placement(name);
  REQUIRE(strategy != nullptr);
  return strategy;
}

}  // namespace

TEST_CASE("a layout with a gap is rejected naming the strategy, size, shards and the first gap") {
  const auto strategy = load_placement("bad-layout-gap");
  // Blocks of 4 over 10: shard 0 [0, 4), shard 1 nothing, shard 2 [8, 10): [4, 8) is held by none.
  const std::string message = error_of([&] { (void)strategy->layout(10, 3, 0); });
  CHECK(message ==
        "placement 'bad-layout-gap' laid out 10 elements over 3 shards with a gap: no shard holds "
        "elements [4, 8); each element must be held by exactly one shard");
  // Checked again on the next call (a failed check is not remembered as passed), for any shard.
  CHECK(error_of([&] { (void)strategy->layout(10, 3, 2); }) == message);
  // Every shard's layout at once is checked the same way.
  CHECK(error_of([&] { (void)strategy->layouts(10, 3); }) == message);
  // One shard holds everything: nothing is missing.
  CHECK(strategy->layout(10, 1, 0).size() == 1);
  // 7 shards of 7 elements (blocks of 1): element 1 is missing.
  CHECK(contains(error_of([&] { (void)strategy->layout(7, 7, 6); }),
                 "7 elements over 7 shards with a gap: no "
                 "shard holds elements [1, 2)"));
  tessera::unload_plugin("bad-layout-gap");
}

TEST_CASE("a layout with an overlap is rejected naming the first overlap and its shards") {
  const auto strategy = load_placement("bad-layout-overlap");
  // Blocks of 4 over 10, each one longer: shard 0 [0, 5), shard 1 [4, 9), shard 2 [8, 10).
  CHECK(error_of([&] { (void)strategy->layout(10, 3, 1); }) ==
        "placement 'bad-layout-overlap' laid out 10 elements over 3 shards with an overlap: elements [4, 5) "
        "are "
        "held by shard 0 and shard 1; each element must be held by exactly one shard");
  CHECK(strategy->layout(10, 1, 0).size() == 1);
  tessera::unload_plugin("bad-layout-overlap");
}

TEST_CASE("an even and an uneven shard layout, and empty shards, pass the coverage check") {
  const auto shard = tessera::dtensor::placement("shard");
  REQUIRE(shard != nullptr);
  for (const auto& [size, shards] :
       std::vector<std::pair<int64_t, int64_t>>{{12, 3}, {10, 3}, {2, 7}, {0, 3}}) {
    int64_t total = 0;
    for (int64_t i = 0; i < shards; ++i)
      for (const tessera_segment& s : shard->layout(size, shards, i)) total += s.length;
    CHECK(total == size);
  }
}

TEST_CASE("layouts: every shard's segments at once, as layout gives them, kept after the first ask") {
  const auto shard = tessera::dtensor::placement("shard");
  REQUIRE(shard != nullptr);
  // torch.chunk of 10 over 4: [0, 3), [3, 6), [6, 9), [9, 10).
  const auto all = shard->layouts(10, 4);
  REQUIRE(all->size() == 4);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 3}, {3, 3}, {6, 3}, {9, 1}};
  for (size_t k = 0; k < 4; ++k) {
    REQUIRE((*all)[k].size() == 1);
    CHECK((*all)[k][0].offset == expected[k].first);
    CHECK((*all)[k][0].length == expected[k].second);
    const auto one = shard->layout(10, 4, static_cast<int64_t>(k));
    REQUIRE(one.size() == 1);
    CHECK(one[0].offset == expected[k].first);
    CHECK(one[0].length == expected[k].second);
  }
  CHECK(shard->layouts(10, 4) == all);  // the same kept answer, not asked again
  CHECK(shard->layouts(10, 5) != all);
}
