// On the meta backend an op computes once per distinct shard layout and the ranks hold that one
// result (there are no bytes a rank could write for another to read), unless a MemoryCounter
// counts each rank's memory: then each rank holds a replica of its own.
#include <doctest/doctest.h>

#include <set>
#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

// The distinct TensorImpls holding the local tensor's shards.
size_t distinct_impls(const ts::Tensor& local) {
  std::set<const void*> impls;
  for (const auto& [rank, shard] : local.shards()) impls.insert(shard.impl().get());
  return impls.size();
}

// A local meta tensor whose rank r holds rows[r] x 8 elements, each made on its own.
ts::Tensor meta_rows(const std::vector<int64_t>& rows) {
  std::vector<std::pair<int, ts::Tensor>> shards;
  const ts::DisabledLocalMode plain;
  for (size_t r = 0; r < rows.size(); ++r)
    shards.emplace_back(static_cast<int>(r),
                        ts::zeros({rows[r], 8}, ts::TensorOptions(ts::kFloat32).backend("meta")));
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
}

}  // namespace

TEST_CASE("meta: ranks of one shard shape hold one result, each shape its own") {
  // Made apart but alike in layout: the local tensor holds one of them for every rank.
  const ts::Tensor even = meta_rows({4, 4, 4, 4});
  CHECK(distinct_impls(even) == 1);
  const ts::Tensor doubled = even * 2.0;
  CHECK(distinct_impls(doubled) == 1);
  for (int r = 0; r < 4; ++r) CHECK(doubled.shard(r).sizes() == ts::Shape{4, 8});

  // Uneven shards: one result per distinct shape, each rank the shape of its own.
  const ts::Tensor uneven = meta_rows({3, 3, 2, 3});
  const ts::Tensor summed = uneven + uneven;
  CHECK(distinct_impls(summed) == 2);
  CHECK(summed.shard(0).impl() == summed.shard(1).impl());
  CHECK(summed.shard(0).impl() == summed.shard(3).impl());
  CHECK(summed.shard(2).sizes() == ts::Shape{2, 8});
  CHECK(summed.shard(3).sizes() == ts::Shape{3, 8});
  // Shards alike in layout but held apart (only those alike the first rank's are merged) still
  // compute once per layout.
  const ts::Tensor mixed = meta_rows({2, 3, 3, 3});
  CHECK(distinct_impls(mixed) == 4);
  const ts::Tensor twice = mixed * 2.0;
  CHECK(distinct_impls(twice) == 2);
  CHECK(twice.shard(1).impl() == twice.shard(3).impl());
  // A reduction over the rows keeps each rank's own shape through the shared results.
  const ts::Tensor column_sums = summed.sum({0});
  for (int r = 0; r < 4; ++r) CHECK(column_sums.shard(r).sizes() == ts::Shape{8});
}

TEST_CASE("meta: while a MemoryCounter counts, every rank holds a result of its own") {
  const ts::Tensor even = meta_rows({4, 4, 4});
  const ts::MemoryCounter counter;
  const ts::Tensor doubled = even * 2.0;
  CHECK(distinct_impls(doubled) == 3);
}

TEST_CASE("cpu: replicated shards still get replicas of their own, sharing bytes until written") {
  ts::LocalMode mode(3);
  const ts::Tensor x = ts::ones({2, 2});  // one value, replicated
  const ts::Tensor y = x * 3.0;
  CHECK(distinct_impls(y) == 3);
  const ts::DisabledLocalMode plain;
  for (int r = 0; r < 3; ++r) CHECK(ts::equal(y.shard(r), ts::full({2, 2}, 3.0)));
}

TEST_CASE("meta: views and splits of one shared shard are one result too, per-rank arguments are not") {
  const ts::Tensor doubled = meta_rows({6, 6, 6, 6}) * 2.0;
  REQUIRE(distinct_impls(doubled) == 1);
  const ts::Tensor flipped = doubled.transpose(0, 1);
  CHECK(distinct_impls(flipped) == 1);
  for (int r = 0; r < 4; ++r) CHECK(flipped.shard(r).sizes() == ts::Shape{8, 6});
  const ts::Tensor rows = doubled.reshape({3, 16});
  CHECK(distinct_impls(rows) == 1);
  CHECK(rows.shard(2).sizes() == ts::Shape{3, 16});
  const std::vector<ts::Tensor> halves = ts::split(doubled, 4, 0);  // 4 rows, then 2
  REQUIRE(halves.size() == 2);
  CHECK(distinct_impls(halves[0]) == 1);
  CHECK(halves[1].shard(3).sizes() == ts::Shape{2, 8});
  CHECK(distinct_impls(ts::cat({doubled, doubled}, 1)) == 1);
  // Each rank starts its rows elsewhere (and rank 3 takes fewer): the views differ, each rank
  // gets its own.
  const ts::Tensor offset = doubled.narrow(0, ts::SymInt(ts::LocalInt({{0, 0}, {1, 1}, {2, 2}, {3, 2}})),
                                           ts::SymInt(ts::LocalInt({{0, 3}, {1, 3}, {2, 3}, {3, 1}})));
  CHECK(distinct_impls(offset) == 4);
  for (int r = 0; r < 3; ++r) CHECK(offset.shard(r).sizes() == ts::Shape{3, 8});
  CHECK(offset.shard(3).sizes() == ts::Shape{1, 8});
}
