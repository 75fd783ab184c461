// Scenario 4: shards of different sizes give per-rank (local int) dimensions; local ints compute
// per rank.
#include "scenarios.hpp"

namespace tutorial {

std::pair<UnevenShapes, UnevenShapes> create_uneven_shards() {
  std::map<int, ts::Tensor> tensors = {
      {0, ts::tensor({{1.f, 2.f, 3.f, 4.f}})},                        // 1 row
      {1, ts::tensor({{5.f, 6.f, 7.f, 8.f}, {9.f, 10.f, 11.f, 12.f}})},  // 2 rows
      {2, ts::tensor({{13.f, 14.f, 15.f, 16.f}})},                    // 1 row
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

}  // namespace tutorial
