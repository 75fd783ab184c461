// CommCounter: per collective and mesh dim, implicit redistributions and the table.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

TEST_CASE("counters see collectives per mesh dim and the op behind implicit redistributions") {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  ts::Tensor x, w;
  {
    auto off = mode.disable();
    // Distinct values: a result with rows or blocks in the wrong place cannot pass.
    x = ts::arange(32).to(ts::kFloat32).reshape({8, 4}) - 7;
    w = ts::arange(24).to(ts::kFloat32).reshape({4, 6}) * 0.5;
  }
  ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(0)});
  ts::CommCounter counter;
  ts::DTensor full = dx.redistribute({ts::Replicate(), ts::Replicate()});
  // Unsharding right to left: tp first, then dp.
  int64_t along_dp = 0, along_tp = 0;
  for (const auto& e : counter.entries()) {
    CHECK(e.collective == "all_gather");
    if (e.mesh_dim == "dp") along_dp += e.calls;
    if (e.mesh_dim == "tp") along_tp += e.calls;
  }
  CHECK(along_dp == 1);
  CHECK(along_tp == 1);
  CHECK(counter.implicit_redistributions().empty());
  CHECK(full.full_tensor().reconcile().to_vector<float>() == x.to_vector<float>());

  ts::CommCounter matmul_counter;
  ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Shard(1), ts::Replicate()});
  ts::DTensor y = ts::matmul(dx, dw);  // S(0) x S(1) on dp fits no rule: something moves
  // y[i][j] = sum_k (4 i + k - 7) * (6 k + j) / 2, written out.
  std::vector<float> expected;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 6; ++j) {
      float sum = 0;
      for (int k = 0; k < 4; ++k)
        sum += static_cast<float>(4 * i + k - 7) * static_cast<float>(6 * k + j) * 0.5f;
      expected.push_back(sum);
    }
  CHECK(y.full_tensor().reconcile().to_vector<float>() == expected);
  const auto implicit = matmul_counter.implicit_redistributions();
  REQUIRE_FALSE(implicit.empty());
  CHECK(implicit[0].op == "matmul");
  const std::string table = matmul_counter.table();
  CHECK(table.find("collective") != std::string::npos);
  CHECK(table.find("implicit redistributions:") != std::string::npos);
  CHECK(table.find("matmul input") != std::string::npos);
}

TEST_CASE("nested counters both count, nothing is counted after a counter ends") {
  ts::Tensor t = ts::local_tensor(
      {{0, ts::from_values<float>({1, 2, 3, 4}, {4})}, {1, ts::from_values<float>({10, 20, 30, 40}, {4})}});
  ts::CommCounter outer;
  {
    ts::CommCounter inner;
    ts::dist::all_reduce(t);
    CHECK(inner.calls() == 1);
  }
  CHECK(t.shard(0).to_vector<float>() == std::vector<float>{11, 22, 33, 44});
  t.shard(1).fill_(5);
  ts::dist::broadcast(t, 1);
  CHECK(t.shard(0).to_vector<float>() == std::vector<float>{5, 5, 5, 5});
  CHECK(outer.calls() == 2);
  CHECK(outer.calls("broadcast") == 1);
}
