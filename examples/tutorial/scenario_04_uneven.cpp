// Scenario 4: shards of different sizes give per-rank (local int) dimensions; local ints compute
// per rank; a DTensor with rows that do not divide evenly round-trips exactly with either shard
// layout.
#include <algorithm>

#include "scenarios.hpp"

namespace tutorial {

std::pair<UnevenShapes, UnevenShapes> create_uneven_shards() {
  std::map<int, ts::Tensor> tensors = {
      {0, ts::tensor({{1.f, 2.f, 3.f, 4.f}})},                           // 1 row
      {1, ts::tensor({{5.f, 6.f, 7.f, 8.f}, {9.f, 10.f, 11.f, 12.f}})},  // 2 rows
      {2, ts::tensor({{13.f, 14.f, 15.f, 16.f}})},                       // 1 row
  };
  ts::Tensor lt = ts::local_tensor(ts::RankMap<ts::Tensor>(tensors));
  std::map<int, ts::Shape> actual_shapes, expected_shapes;
  for (const auto& [rank, t] : tensors) {
    actual_shapes[rank] = lt.shape().at(rank);
    expected_shapes[rank] = t.sizes();
  }
  return {{lt.shape()[0].is_local(), actual_shapes}, {true, expected_shapes}};
}

std::pair<IntMaps, IntMaps> local_int_arithmetic() {
  const std::map<int, int64_t> a = {{0, 10}, {1, 20}, {2, 30}};
  const std::map<int, int64_t> b = {{0, 1}, {1, 2}, {2, 3}};
  ts::LocalInt local_a(a), local_b(b);
  IntMaps actual{(local_a + local_b).values(), (local_a * local_b).values()};
  IntMaps expected;
  for (const auto& [rank, value] : a) {
    expected.first[rank] = value + b.at(rank);
    expected.second[rank] = value * b.at(rank);
  }
  return {actual, expected};
}

namespace {
// Rows per shard: torch.chunk (f = ceil(n/k); shard i gets
// max(0, min(f, n - f*i))) or balanced (the first n % k shards get one extra).
RowsPerRank chunk_rows(int64_t n, int k) {
  const int64_t f = (n + k - 1) / k;
  RowsPerRank rows;
  for (int i = 0; i < k; ++i) rows[i] = std::max<int64_t>(0, std::min<int64_t>(f, n - f * i));
  return rows;
}
RowsPerRank balanced_rows(int64_t n, int k) {
  RowsPerRank rows;
  for (int i = 0; i < k; ++i) rows[i] = n / k + (i < n % k ? 1 : 0);
  return rows;
}
}  // namespace

std::pair<UnevenRoundTrip, UnevenRoundTrip> dtensor_uneven_sharding(int64_t rows, int world) {
  ts::Tensor original;
  {
    auto off = ts::maybe_disable_local_mode();
    original = ts::arange(rows * 4).reshape({rows, 4}).to(ts::kFloat32);
  }
  ts::LocalMode mode(world);
  ts::DeviceMesh mesh = ts::init_device_mesh(mesh_device(), {world});
  ts::DTensor by_chunk = ts::distribute_tensor(original, mesh, {ts::Shard(0)});
  ts::DTensor balanced = ts::distribute_tensor(original, mesh, {ts::BalancedShard(0)});
  UnevenRoundTrip actual{
      {}, {{by_chunk.full_tensor().reconcile(), true}, {balanced.full_tensor().reconcile(), true}}};
  for (int rank = 0; rank < world; ++rank) {
    actual.first.first[rank] = by_chunk.to_local().shard(rank).size(0);
    actual.first.second[rank] = balanced.to_local().shard(rank).size(0);
  }
  UnevenRoundTrip expected{{chunk_rows(rows, world), balanced_rows(rows, world)},
                           {{original, true}, {original, true}}};
  return {actual, expected};
}

}  // namespace tutorial
