// The tutorial's scenarios, through the same functions the demo runs: each returns (actual,
// expected) and the tests only compare.
#include <doctest/doctest.h>

#include "scenarios.hpp"

#define CHECK_OUTCOME(call)                                   \
  do {                                                        \
    const auto outcome = (call);                              \
    INFO("actual:   " << tutorial::describe(outcome.first));  \
    INFO("expected: " << tutorial::describe(outcome.second)); \
    CHECK(tutorial::same(outcome.first, outcome.second));     \
  } while (false)

TEST_CASE("scenario 1: basic operations") {
  CHECK_OUTCOME(tutorial::create_local_tensor());
  CHECK_OUTCOME(tutorial::arithmetic_operations());
  CHECK_OUTCOME(tutorial::reconcile_identical_shards());
  CHECK_OUTCOME(tutorial::access_individual_shards());
  for (int world : {1, 3, 4, 7}) CHECK_OUTCOME(tutorial::use_local_mode(world));
}

TEST_CASE("scenario 2: collectives with every algorithm") {
  const std::string saved = tessera::dist::algorithms();
  for (const char* rules :
       {"*:direct", "all_reduce:ring;broadcast:tree;all_gather:bruck;reduce_scatter:ring;*:direct",
        "all_reduce:rd;all_gather:ring;*:direct", "all_reduce:rabenseifner;*:direct"}) {
    CAPTURE(rules);
    tessera::dist::set_algorithms(rules);
    CHECK_OUTCOME(tutorial::all_reduce_sum());
    for (int src : {0, 1, 2}) CHECK_OUTCOME(tutorial::broadcast_from_rank(src));
    CHECK_OUTCOME(tutorial::all_gather_tensors());
    CHECK_OUTCOME(tutorial::reduce_scatter_tensors());
  }
  tessera::dist::set_algorithms(saved);
}

TEST_CASE("scenario 3: DTensor with several collective algorithms") {
  const std::string saved = tessera::dist::algorithms();
  for (const char* rules :
       {"*:direct", "all_reduce:ring;broadcast:tree;all_gather:bruck;reduce_scatter:ring;*:direct",
        "all_reduce:rd;all_gather:ring;*:direct"}) {
    CAPTURE(rules);
    tessera::dist::set_algorithms(rules);
    CHECK_OUTCOME(tutorial::distribute_and_verify());
    for (uint64_t seed : {1, 2}) {
      CAPTURE(seed);
      CHECK_OUTCOME(tutorial::dtensor_matmul(seed));
      CHECK_OUTCOME(tutorial::dtensor_linear_layer(seed));
    }
  }
  tessera::dist::set_algorithms(saved);
}

TEST_CASE("scenario 4: uneven shards and local ints") {
  CHECK_OUTCOME(tutorial::create_uneven_shards());
  CHECK_OUTCOME(tutorial::local_int_arithmetic());
}

TEST_CASE("scenario 4: uneven DTensor shards round-trip exactly") {
  CHECK_OUTCOME(tutorial::dtensor_uneven_sharding());  // 10 rows on 3 ranks: 4,4,2 and 4,3,3
  // Other golden layouts (torch.chunk), including empty shards.
  const std::vector<std::pair<int64_t, int>> layouts = {{10, 4}, {9, 4}, {2, 4}, {12, 8},
                                                        {12, 4}, {0, 3}, {1, 1}};
  for (const auto& layout : layouts) {
    const int64_t rows = layout.first;  // not structured bindings: clang 14 cannot capture one
    const int world = layout.second;
    CAPTURE(rows);
    CAPTURE(world);
    CHECK_OUTCOME(tutorial::dtensor_uneven_sharding(rows, world));
  }
}

TEST_CASE("scenario 5: rank-specific computation") {
  for (int world : {1, 3, 4, 7}) {
    CAPTURE(world);
    CHECK_OUTCOME(tutorial::use_rank_map(world));
    CHECK_OUTCOME(tutorial::use_tensor_map(world));
    CHECK_OUTCOME(tutorial::disable_mode_temporarily(world));
    CHECK_OUTCOME(tutorial::per_rank_data_offset(world, 4));
  }
  CHECK_OUTCOME(tutorial::use_maybe_disable());
  CHECK_OUTCOME(tutorial::per_rank_data_offset(3, 0));  // empty slices
}

TEST_CASE("scenario 6: multi-dim meshes with several collective algorithms") {
  CHECK_OUTCOME(tutorial::create_2d_mesh());
  const std::string saved = tessera::dist::algorithms();
  for (const char* rules :
       {"*:direct", "all_reduce:ring;broadcast:tree;all_gather:bruck;reduce_scatter:ring;*:direct",
        "all_reduce:rd;all_gather:ring;*:direct"}) {
    CAPTURE(rules);
    tessera::dist::set_algorithms(rules);
    for (uint64_t seed : {1, 2}) {
      CAPTURE(seed);
      CHECK_OUTCOME(tutorial::hybrid_parallelism(seed));
    }
    CHECK_OUTCOME(tutorial::create_3d_mesh(1));
  }
  tessera::dist::set_algorithms(saved);
}

TEST_CASE("every scenario in the demo's catalogue matches") {
  for (const tutorial::Scenario& scenario : tutorial::all_scenarios()) {
    CAPTURE(scenario.name);
    CHECK(scenario.run().ok);
  }
}

TEST_CASE("the comparison used by the scenarios can fail") {
  // A guard against a vacuous same(): different values, ranks or kinds must compare unequal.
  namespace ts = tessera;
  CHECK_FALSE(tutorial::same(ts::tensor({1.f}), ts::tensor({2.f})));
  CHECK_FALSE(tutorial::same(ts::local_tensor({{0, ts::tensor({1.f})}}), ts::tensor({1.f})));
  CHECK_FALSE(tutorial::same(std::map<int, float>{{0, 1.f}}, std::map<int, float>{{1, 1.f}}));
  CHECK_FALSE(tutorial::same(std::pair<bool, int>{true, 3}, std::pair<bool, int>{true, 4}));
  // Summarized tensors: exact compares bitwise; otherwise allclose; shapes must match.
  const ts::Tensor a = ts::tensor({1.f, 2.f});
  CHECK(tutorial::same(tutorial::Summarized{a}, tutorial::Summarized{a + 1e-6f}));
  CHECK_FALSE(tutorial::same(tutorial::Summarized{a, true}, tutorial::Summarized{a + 1e-6f, true}));
  CHECK_FALSE(tutorial::same(tutorial::Summarized{a}, tutorial::Summarized{a + 1e-3f}));
  CHECK_FALSE(tutorial::same(tutorial::Summarized{a}, tutorial::Summarized{ts::tensor({{1.f, 2.f}})}));
}
