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
    x = ts::ones({8, 4});
    w = ts::ones({4, 6});
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

  ts::CommCounter matmul_counter;
  ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Shard(1), ts::Replicate()});
  ts::DTensor y = ts::matmul(dx, dw);  // S(0) x S(1) on dp fits no rule: something moves
  CHECK(ts::allclose(y.full_tensor().reconcile(), ts::full({8, 6}, 4.f)));
  const auto implicit = matmul_counter.implicit_redistributions();
  REQUIRE_FALSE(implicit.empty());
  CHECK(implicit[0].op == "matmul");
  const std::string table = matmul_counter.table();
  CHECK(table.find("collective") != std::string::npos);
  CHECK(table.find("implicit redistributions:") != std::string::npos);
  CHECK(table.find("matmul input") != std::string::npos);
}

TEST_CASE("nested counters both count; nothing is counted after a counter ends") {
  ts::Tensor t = ts::local_tensor({{0, ts::ones({4})}, {1, ts::ones({4})}});
  ts::CommCounter outer;
  {
    ts::CommCounter inner;
    ts::dist::all_reduce(t);
    CHECK(inner.calls() == 1);
  }
  ts::dist::broadcast(t, 1);
  CHECK(outer.calls() == 2);
  CHECK(outer.calls("broadcast") == 1);
}
