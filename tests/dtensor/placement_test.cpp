// Placements and layouts: golden shard sizes computed by hand, text forms, parsing errors.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {
// Rows each rank of a 1-d mesh of k ranks holds of n rows under `placement`.
std::vector<int64_t> rows(int64_t n, int k, const ts::Placement& placement) {
  ts::LocalMode mode(k);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {k});
  ts::DTensor d = ts::distribute_tensor(ts::zeros({n, 2}), mesh, {placement});
  std::vector<int64_t> sizes;
  for (int r = 0; r < k; ++r) sizes.push_back(d.to_local().shard(r).size(0));
  return sizes;
}
}  // namespace

TEST_CASE("golden: default shard layout (torch.chunk)") {
  CHECK(rows(10, 3, ts::Shard(0)) == std::vector<int64_t>{4, 4, 2});
  CHECK(rows(10, 4, ts::Shard(0)) == std::vector<int64_t>{3, 3, 3, 1});
  CHECK(rows(2, 4, ts::Shard(0)) == std::vector<int64_t>{1, 1, 0, 0});
  CHECK(rows(0, 3, ts::Shard(0)) == std::vector<int64_t>{0, 0, 0});
  CHECK(rows(9, 4, ts::Shard(0)) == std::vector<int64_t>{3, 3, 3, 0});
  CHECK(rows(12, 8, ts::Shard(0)) == std::vector<int64_t>{2, 2, 2, 2, 2, 2, 0, 0});
}

TEST_CASE("golden: balanced shard layout") {
  CHECK(rows(10, 3, ts::BalancedShard(0)) == std::vector<int64_t>{4, 3, 3});
  CHECK(rows(10, 4, ts::BalancedShard(0)) == std::vector<int64_t>{3, 3, 2, 2});
}

// Strided shard (PyTorch's _StridedShard): the dim cut into k blocks (torch.chunk), shard i holding
// chunk i of each block, in block order.
TEST_CASE("golden: strided shard layout") {
  const auto held = [](int64_t n, int shards, int64_t split_factor) {
    ts::LocalMode mode(shards);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {shards});
    const ts::DTensor d = ts::distribute_tensor(ts::arange(n), mesh, {ts::StridedShard(0, split_factor)});
    std::vector<std::vector<int64_t>> out;
    for (int r = 0; r < shards; ++r) out.push_back(d.to_local().shard(r).to_vector<int64_t>());
    return out;
  };
  using Rows = std::vector<std::vector<int64_t>>;
  CHECK(held(8, 2, 2) == Rows{{0, 1, 4, 5}, {2, 3, 6, 7}});
  CHECK(held(8, 2, 1) == Rows{{0, 1, 2, 3}, {4, 5, 6, 7}});  // one block: Shard
  // 10 in blocks 5, 5 (chunks 2, 2, 1 each); 7 in blocks 4, 3 over 3 (2, 2, 0 and 1, 1, 1).
  CHECK(held(10, 3, 2) == Rows{{0, 1, 5, 6}, {2, 3, 7, 8}, {4, 9}});
  CHECK(held(7, 3, 2) == Rows{{0, 1, 4}, {2, 3, 5}, {6}});
  CHECK(held(3, 2, 4) == Rows{{0, 1, 2}, {}});  // blocks 1, 1, 1, 0: every element in chunk 0
  CHECK(ts::placements_text({ts::StridedShard(1, 4)}) == "SS(1,4)");
  CHECK(ts::parse_placements("SS(1, 4)") == ts::Placements{ts::StridedShard(1, 4)});
  CHECK_THROWS_WITH(ts::parse_placements("SS(0, 0)"), doctest::Contains("split factor"));
}

TEST_CASE("golden: two mesh dims sharding one tensor dim nest") {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2});
  ts::Tensor x = ts::arange(10).reshape({10, 1});
  ts::DTensor d = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(0)});
  const std::vector<int64_t> sizes = {3, 2, 3, 2};
  const std::vector<int64_t> offsets = {0, 3, 5, 8};
  for (int r = 0; r < 4; ++r) {
    const ts::Tensor shard = d.to_local().shard(r);
    CHECK(shard.size(0) == sizes[static_cast<size_t>(r)]);
    CHECK(shard[0].item<int64_t>() == offsets[static_cast<size_t>(r)]);
  }
}

TEST_CASE("placements print and parse back") {
  const ts::Placements p = {ts::Shard(0), ts::Replicate(), ts::Partial("max"), ts::BalancedShard(1),
                            ts::Partial()};
  CHECK(ts::placements_text(p) == "S(0),R,P(max),B(1),P(sum)");
  CHECK(ts::parse_placements("S(0),R,P(max),B(1),P(sum)") == p);
  CHECK(ts::parse_placements(" S( 1 ) , R ") == ts::Placements{ts::Shard(1), ts::Replicate()});
  CHECK(ts::Shard(0) == ts::Shard(0));
  CHECK_FALSE(ts::Shard(0) == ts::BalancedShard(0));
  CHECK_FALSE(ts::Shard(0) == ts::Shard(1));
  CHECK(ts::Shard(0).is_shard());
  CHECK(ts::Replicate().is_replicate());
  CHECK(ts::Partial().is_partial());
}

TEST_CASE("malformed placement text is an error") {
  CHECK_THROWS_WITH_AS(ts::Placement::parse("X(0)"), doctest::Contains("unknown prefix 'X'"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::parse("S"), doctest::Contains("S needs a tensor dim"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::parse("S(a)"), doctest::Contains("needs a tensor dim"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::parse("R(0)"), doctest::Contains("takes no argument"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::parse("S(0"), doctest::Contains("is malformed"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::parse("P(mean)"), doctest::Contains("unknown reduce op 'mean'"),
                       ts::Error);
}

TEST_CASE("visualize_sharding draws which ranks hold which block") {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2});
  ts::Tensor x;
  {
    auto off = mode.disable();
    x = ts::zeros({10, 6});
  }
  const std::string grid =
      ts::visualize_sharding(ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(1)}));
  CHECK(grid.find("          cols 0-2  cols 3-5\nrows 0-4  rank 0    rank 1\nrows 5-9  rank 2    rank 3\n") !=
        std::string::npos);
  const std::string replicated =
      ts::visualize_sharding(ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()}));
  CHECK(replicated.find("rows 0-4  ranks 0,1") != std::string::npos);
  ts::DeviceMesh line = ts::init_device_mesh("cpu", {4});
  ts::Tensor v;
  {
    auto off = mode.disable();
    v = ts::zeros({2});
  }
  const std::string sparse = ts::visualize_sharding(ts::distribute_tensor(v, line, {ts::Shard(0)}));
  // Empty shards are no block: they are named after the grid.
  CHECK(sparse.find("elements 0  rank 0\nelements 1  rank 1\nranks 2,3 hold no elements\n") !=
        std::string::npos);
  CHECK_THROWS_WITH_AS(
      ts::visualize_sharding(ts::distribute_tensor(ts::zeros({2, 2, 2}), line, {ts::Replicate()})),
      doctest::Contains("only 1-d and 2-d"), ts::Error);
}
