// Scenario 1: create a local tensor from per-rank tensors, compute per rank, reconcile, and let a
// local mode make local tensors.
#include "scenarios.hpp"

namespace tutorial {

std::pair<ShapeAndShards, ShapeAndShards> create_local_tensor() {
  ts::Tensor rank0 = ts::tensor({{1.f, 2.f}, {3.f, 4.f}});
  ts::Tensor rank1 = ts::tensor({{5.f, 6.f}, {7.f, 8.f}});
  ts::Tensor lt = ts::local_tensor({{0, rank0}, {1, rank1}});
  ShapeAndShards actual{{lt.sizes(), lt.ranks()}, {lt.shard(0), lt.shard(1)}};
  ShapeAndShards expected{{ts::Shape{2, 2}, ts::RankSet{0, 1}}, {rank0, rank1}};
  return {actual, expected};
}

std::pair<std::vector<ts::Tensor>, std::vector<ts::Tensor>> arithmetic_operations() {
  ts::Tensor input0 = ts::tensor({1.f, 2.f, 3.f});
  ts::Tensor input1 = ts::tensor({4.f, 5.f, 6.f});
  ts::Tensor lt = ts::local_tensor({{0, input0}, {1, input1}});
  ts::Tensor doubled = lt * 2;  // the same op on every rank's shard (SPMD)
  ts::Tensor added = lt + 10;
  return {{doubled.shard(0), doubled.shard(1), added.shard(0)}, {input0 * 2, input1 * 2, input0 + 10}};
}

std::pair<ts::Tensor, ts::Tensor> reconcile_identical_shards() {
  ts::Tensor value = ts::tensor({1.f, 2.f, 3.f});
  ts::Tensor lt = ts::local_tensor({{0, value.clone()}, {1, value.clone()}, {2, value.clone()}});
  return {lt.reconcile(), value};
}

std::pair<std::pair<bool, int>, std::pair<bool, int>> use_local_mode(int world_size) {
  ts::LocalMode mode(world_size);
  ts::Tensor x = ts::ones({2, 3});  // a factory inside the mode makes a local tensor
  return {{x.is_local(), static_cast<int>(x.ranks().size())}, {true, world_size}};
}

std::pair<std::vector<ts::Tensor>, std::vector<ts::Tensor>> access_individual_shards() {
  ts::Tensor input0 = ts::tensor({1.f, 2.f});
  ts::Tensor input1 = ts::tensor({3.f, 4.f});
  ts::Tensor lt = ts::local_tensor({{0, input0}, {1, input1}, {2, ts::tensor({5.f, 6.f})}});
  return {{lt.shard(0), lt.shard(1)}, {input0, input1}};
}

}  // namespace tutorial
