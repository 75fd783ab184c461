// Per-rank work done once per class of ranks: HeldLengths (a shard's length per distinct
// coordinate that matters) and map_rank_classes (one result per alike shard and key on a
// shapes-only backend, every rank its own elsewhere). Expected lengths are torch.chunk's, worked
// out by hand: 10 over 4 is 3, 3, 3, 1; 5 over 3 is 2, 2, 1.
#include <doctest/doctest.h>

#include <optional>
#include <set>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "dtensor/held_lengths.hpp"
#include "dtensor/redistribute.hpp"

namespace ts = tessera;

namespace {

size_t distinct_impls(const ts::Tensor& local) {
  std::set<const void*> impls;
  for (const auto& [rank, shard] : local.shards()) impls.insert(shard.impl().get());
  return impls.size();
}

}  // namespace

TEST_CASE("HeldLengths: one mesh dim, uneven: each coordinate's chunk, widest and narrowest") {
  ts::dtensor::HeldLengths lengths(10, 0, {ts::Shard(0), ts::Replicate()}, {4, 2}, 2);
  const std::vector<int64_t> expected = {3, 3, 3, 1};
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 2; ++b) CHECK(lengths.at({a, b}) == expected[static_cast<size_t>(a)]);
  CHECK(lengths.widest() == 3);
  CHECK(lengths.narrowest() == 1);
  CHECK(lengths.distinct() == std::vector<int64_t>{1, 3});
}

TEST_CASE("HeldLengths: nested shards split what the earlier mesh dim left, upto stops early") {
  // 10 over 2 gives 5 and 5; each 5 over 3 gives 2, 2, 1.
  const ts::Placements nested = {ts::Shard(0), ts::Shard(0)};
  ts::dtensor::HeldLengths both(10, 0, nested, {2, 3}, 2);
  for (int64_t a = 0; a < 2; ++a) {
    CHECK(both.at({a, 0}) == 2);
    CHECK(both.at({a, 1}) == 2);
    CHECK(both.at({a, 2}) == 1);
  }
  CHECK(both.distinct() == std::vector<int64_t>{1, 2});
  ts::dtensor::HeldLengths first_only(10, 0, nested, {2, 3}, 1);
  CHECK(first_only.at({1, 2}) == 5);
  CHECK(first_only.narrowest() == 5);
  // A dim no mesh dim shards: its whole size everywhere.
  ts::dtensor::HeldLengths other_dim(7, 1, nested, {2, 3}, 2);
  CHECK(other_dim.at({1, 2}) == 7);
  CHECK(other_dim.distinct() == std::vector<int64_t>{7});
}

TEST_CASE("map_rank_classes on meta: f once per class of alike shard and key, each rank its class's result") {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("meta", {4, 2});
  ts::Tensor local;
  {
    const ts::DisabledLocalMode plain;
    std::vector<std::pair<int, ts::Tensor>> shards;
    // Ranks 0..5 hold 3 x 4, ranks 6 and 7 hold 1 x 4 (rows of 10 over the first mesh dim's 4).
    for (int r = 0; r < 8; ++r)
      shards.emplace_back(r, ts::zeros({r < 6 ? 3 : 1, 4}, ts::TensorOptions(ts::kFloat32).backend("meta")));
    local = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
  }
  int calls = 0;
  const ts::Tensor out = ts::dtensor::map_rank_classes(
      local, mesh,
      [](const std::vector<int64_t>& coord, std::vector<int64_t>& words) { words.push_back(coord[1]); },
      [&](int, const std::vector<int64_t>& coord, const ts::Tensor& shard) {
        ++calls;
        return ts::zeros({shard.size(0), 4 + coord[1]}, ts::TensorOptions(ts::kFloat32).backend("meta"));
      });
  // Classes: (3 rows, column 0), (3 rows, column 1), (1 row, column 0), (1 row, column 1).
  CHECK(calls == 4);
  CHECK(distinct_impls(out) == 4);
  for (int r = 0; r < 8; ++r) {
    const std::vector<int64_t> coord = mesh.coordinate_of(r);
    CHECK(out.shard(r).sizes() == ts::Shape{r < 6 ? 3 : 1, 4 + coord[1]});
  }
  CHECK(out.shard(0).impl() == out.shard(2).impl());
  CHECK(out.shard(6).impl() != out.shard(0).impl());
}

TEST_CASE("map_rank_classes off meta, or while a MemoryCounter counts: every rank runs f") {
  ts::LocalMode mode(4);
  for (const char* backend : {"cpu", "meta"}) {
    CAPTURE(backend);
    const ts::DeviceMesh mesh = ts::init_device_mesh(backend, {4});
    const ts::Tensor local = ts::zeros({2, 3}, ts::TensorOptions(ts::kFloat32).backend(backend));
    std::optional<ts::MemoryCounter> counter;
    if (std::string(backend) == "meta") counter.emplace();
    int calls = 0;
    const ts::Tensor out = ts::dtensor::map_rank_classes(
        local, mesh, nullptr, [&](int, const std::vector<int64_t>&, const ts::Tensor& shard) {
          ++calls;
          return shard + 1.0;
        });
    CHECK(calls == 4);
    CHECK(distinct_impls(out) == 4);
  }
}

TEST_CASE("ops on meta shards of several classes compute once per class (spmd_alias groups)") {
  ts::LocalMode mode(4);
  ts::Tensor local;
  {
    const ts::DisabledLocalMode plain;
    const auto meta = ts::TensorOptions(ts::kFloat32).backend("meta");
    // Ranks 0 and 1 hold one object, ranks 2 and 3 another of another layout. Computing per rank,
    // ranks 2 and 3 would get a result each (only shards alike the first rank's are merged).
    const ts::Tensor a = ts::zeros({3, 4}, meta), b = ts::zeros({1, 4}, meta);
    local = ts::local_tensor(ts::RankMap<ts::Tensor>({{0, a}, {1, a}, {2, b}, {3, b}}));
  }
  CHECK(distinct_impls(local) == 2);
  for (const ts::Tensor& out : {local.to(ts::kBFloat16), ts::zeros_like(local), ts::empty_like(local)}) {
    CHECK(distinct_impls(out) == 2);
    CHECK(out.shard(1).sizes() == ts::Shape{3, 4});
    CHECK(out.shard(3).sizes() == ts::Shape{1, 4});
  }
  CHECK(local.to(ts::kBFloat16).shard(3).dtype() == ts::kBFloat16);
}

TEST_CASE("fresh results on cpu stay one per rank, even from shards that are one object") {
  ts::LocalMode mode(4);
  ts::Tensor local;
  {
    const ts::DisabledLocalMode plain;
    const ts::Tensor one = ts::ones({2, 3}, ts::TensorOptions(ts::kFloat32).backend("cpu"));
    local = ts::local_tensor(ts::RankMap<ts::Tensor>({{0, one}, {1, one}, {2, one}, {3, one}}));
  }
  REQUIRE(distinct_impls(local) == 1);
  for (const ts::Tensor& out : {local.to(ts::kFloat64), ts::zeros_like(local), ts::empty_like(local)}) {
    CHECK(distinct_impls(out) == 4);
    // A rank writing its result in place changes no other rank's.
    const ts::DisabledLocalMode plain;
    ts::Tensor rank0 = out.shard(0);
    rank0.fill_(7.0);
    CHECK(out.shard(1).to(ts::kFloat64).to_vector<double>() != std::vector<double>(6, 7.0));
  }
}

TEST_CASE(
    "distribute_tensor of a plain tensor on 4 x 2: each rank's rows, uneven, by its sharding coordinate") {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2});
  ts::Tensor plain;
  {
    const ts::DisabledLocalMode off;
    plain = ts::arange(30, ts::TensorOptions(ts::kFloat64)).view({10, 3});
  }
  // Rows of 10 over 4 (torch.chunk): [0, 3), [3, 6), [6, 9), [9, 10); the second mesh dim replicates.
  const std::vector<std::pair<int64_t, int64_t>> rows = {{0, 3}, {3, 6}, {6, 9}, {9, 10}};
  const ts::Tensor local = ts::distribute_tensor(plain, mesh, {ts::Shard(0), ts::Replicate()}).to_local();
  const ts::DisabledLocalMode off;
  for (int r = 0; r < 8; ++r) {
    CAPTURE(r);
    const auto [begin, end] = rows[static_cast<size_t>(r / 2)];
    std::vector<double> expected;
    for (int64_t v = begin * 3; v < end * 3; ++v) expected.push_back(static_cast<double>(v));
    CHECK(local.shard(r).sizes() == ts::Shape{end - begin, 3});
    CHECK(local.shard(r).to_vector<double>() == expected);
  }
  // Ranks 0 and 1 hold one part as copy-on-write replicas: writing one leaves the other alone.
  ts::Tensor rank0 = local.shard(0);
  rank0.fill_(-1.0);
  CHECK(local.shard(1).to_vector<double>() == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8});

  // Columns of 3 over the second mesh dim: [0, 2) and [2, 3), whatever the first coordinate.
  const ts::Tensor columns = ts::distribute_tensor(plain, mesh, {ts::Replicate(), ts::Shard(1)}).to_local();
  for (int r = 0; r < 8; ++r) CHECK(columns.shard(r).sizes() == ts::Shape{10, r % 2 == 0 ? 2 : 1});
  CHECK(columns.shard(7).to_vector<double>() == std::vector<double>{2, 5, 8, 11, 14, 17, 20, 23, 26, 29});
}
