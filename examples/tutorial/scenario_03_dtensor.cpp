// Scenario 3: DTensors on a 1-d mesh of 4 ranks: distribute and gather back, a sharded matmul and a
// linear layer, each compared with the same computation on plain tensors.
#include "scenarios.hpp"

namespace tutorial {

std::pair<TensorPair, TensorPair> distribute_and_verify() {
  ts::Tensor expected;
  {
    auto off = ts::maybe_disable_local_mode();
    expected = ts::arange(16).reshape({4, 4}).to(ts::kFloat32);  // plain: what every rank should see
  }
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh(mesh_device(), {4});
  ts::Tensor t = ts::arange(16).reshape({4, 4}).to(ts::kFloat32);        // local: every rank holds it
  ts::DTensor sharded = ts::distribute_tensor(t, mesh, {ts::Shard(0)});  // rank r holds row r
  ts::DTensor replicated = ts::distribute_tensor(t, mesh, {ts::Replicate()});
  TensorPair actual{{sharded.full_tensor().reconcile(), true}, {replicated.to_local().reconcile(), true}};
  return {actual, {{expected, true}, {expected, true}}};
}

std::pair<Summarized, Summarized> dtensor_matmul(uint64_t seed) {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh(mesh_device(), {4});
  ts::Tensor a, b, expected;
  {
    auto off = mode.disable();  // plain inputs and a plain expected value
    ts::Generator generator(seed);
    a = ts::randn({8, 4}, generator);
    b = ts::randn({4, 6}, generator);
    expected = ts::matmul(a, b);
  }
  ts::DTensor da = ts::distribute_tensor(a, mesh, {ts::Shard(0)});
  ts::DTensor db = ts::distribute_tensor(b, mesh, {ts::Replicate()});
  ts::DTensor product = ts::matmul(da, db);  // S(0) x R -> S(0): no communication
  return {{product.full_tensor().reconcile()}, {expected}};
}

std::pair<Summarized, Summarized> dtensor_linear_layer(uint64_t seed) {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh(mesh_device(), {4});
  ts::Tensor x, w, b, expected;
  {
    auto off = mode.disable();
    ts::Generator generator(seed);
    x = ts::randn({16, 8}, generator);
    w = ts::randn({8, 4}, generator);
    b = ts::randn({4}, generator);
    expected = ts::relu(ts::matmul(x, w) + b);
  }
  ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate()});
  ts::DTensor db = ts::distribute_tensor(b, mesh, {ts::Replicate()});
  ts::DTensor y = ts::relu(ts::matmul(dx, dw) + db);  // stays S(0) throughout
  return {{y.full_tensor().reconcile()}, {expected}};
}

}  // namespace tutorial
