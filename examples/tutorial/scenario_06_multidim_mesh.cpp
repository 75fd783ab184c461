// Scenario 6: multi-dimensional meshes: a 2-d (dp, tp) mesh, hybrid data + tensor parallelism on
// it, and a 3-d (pp, dp, tp) mesh over 24 ranks.
#include "scenarios.hpp"

namespace tutorial {

std::pair<MeshFacts, MeshFacts> create_2d_mesh() {
  const std::vector<int64_t> shape = {4, 2};
  const std::vector<std::string> names = {"dp", "tp"};
  ts::LocalMode mode(8);
  ts::DeviceMesh mesh = ts::init_device_mesh(mesh_device(), shape, names);
  return {{{mesh.shape(), mesh.dim_names()}, mesh.size()}, {{shape, names}, shape[0] * shape[1]}};
}

std::pair<Summarized, Summarized> hybrid_parallelism(uint64_t seed) {
  ts::LocalMode mode(8);
  ts::DeviceMesh mesh = ts::init_device_mesh(mesh_device(), {4, 2}, {"dp", "tp"});
  ts::Tensor x, w, expected;
  {
    auto off = mode.disable();
    ts::Generator generator(seed);
    x = ts::randn({16, 8}, generator);
    w = ts::randn({8, 12}, generator);
    expected = ts::matmul(x, w);
  }
  // Batch split over dp, weight columns split over tp: the product is [S(0), S(1)].
  ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()});
  ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(1)});
  return {{ts::matmul(dx, dw).full_tensor().reconcile()}, {expected}};
}

std::pair<MeshAndTensor, MeshAndTensor> create_3d_mesh(uint64_t seed) {
  const std::vector<int64_t> shape = {2, 3, 4};
  const std::vector<std::string> names = {"pp", "dp", "tp"};
  ts::LocalMode mode(24);
  ts::DeviceMesh mesh = ts::init_device_mesh(mesh_device(), shape, names);
  ts::Tensor t;
  {
    auto off = mode.disable();
    ts::Generator generator(seed);
    t = ts::randn({8, 16, 32}, generator);
  }
  // 8 rows over dp (3 ranks) is uneven: 3, 3, 2.
  ts::DTensor dt = ts::distribute_tensor(t, mesh, {ts::Replicate(), ts::Shard(0), ts::Shard(2)});
  MeshFacts actual_mesh{{mesh.shape(), mesh.dim_names()}, mesh.size()};
  MeshFacts expected_mesh{{shape, names}, shape[0] * shape[1] * shape[2]};
  return {{actual_mesh, {dt.full_tensor().reconcile(), true}}, {expected_mesh, {t, true}}};
}

}  // namespace tutorial
