// The API contract: the first programs a user writes against the public API (per-rank tensors,
// collectives, meshes, DTensors, dtypes, placements, comparisons) compile and run as written, with the
// declarations they leave implicit, such as `outputs`, `x` and `w`, added.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
namespace ts = tessera;

TEST_CASE("API contract: per-rank tensors") {
  // 1. per-rank tensors
  ts::Tensor lt = ts::local_tensor(
      {{0, ts::tensor({{1.f, 2.f}, {3.f, 4.f}})}, {1, ts::tensor({{5.f, 6.f}, {7.f, 8.f}})}});
  CHECK(lt.is_local());
  CHECK(lt.ranks() == ts::RankSet{0, 1});
  CHECK(ts::equal(lt.shard(1), ts::tensor({{5.f, 6.f}, {7.f, 8.f}})));
  CHECK(lt.shape() == ts::Shape{2, 2});
  CHECK(ts::equal((lt * 2).shard(0), ts::tensor({{2.f, 4.f}, {6.f, 8.f}})));
  CHECK_THROWS_AS(lt.reconcile(), ts::Error);  // the shards differ
  {
    ts::LocalMode mode(4);            // or ts::LocalMode mode(ts::RankSet{0, 2, 5})
    ts::Tensor x = ts::ones({2, 3});  // local over ranks 0..3
    CHECK(x.ranks() == ts::RankSet{0, 1, 2, 3});
    {
      auto off = mode.disable();
      ts::Tensor p = ts::ones({2, 2});
      CHECK_FALSE(p.is_local());
    }
    ts::Tensor r = ts::rank_map([](int rank) { return ts::full({2, 3}, float(rank)); });
    ts::Tensor s = ts::tensor_map(r, [](int rank, const ts::Tensor& t) { return t * (rank + 1); });
    CHECK(s.shard(3).to_vector<float>() == std::vector<float>(6, 12.f));
  }
  ts::LocalInt a({{0, 10}, {1, 20}, {2, 30}});  // a + b, a * b, ts::sym_max(a, b), a.values()
  ts::LocalInt b({{0, 1}, {1, 2}, {2, 3}});
  CHECK((a + b).values() == std::map<int, int64_t>{{0, 11}, {1, 22}, {2, 33}});
  CHECK((a * b).values() == std::map<int, int64_t>{{0, 10}, {1, 40}, {2, 90}});
  CHECK(ts::sym_max(a, b).values() == a.values());
  ts::SymInt n = lt.shape()[0];  // n.is_local(), n.as_int() (throws if per-rank),
  CHECK_FALSE(n.is_local());     // n.local() -> LocalInt; values() -> std::map<int, int64_t>
  CHECK(n.as_int() == 2);
  ts::SymInt m = ts::local_tensor({{0, ts::zeros({1})}, {1, ts::zeros({2})}}).shape()[0];
  CHECK(m.local().values() == std::map<int, int64_t>{{0, 1}, {1, 2}});
}

TEST_CASE("API contract: collectives") {
  ts::Tensor lt = ts::local_tensor({{0, ts::tensor({1.f, 2.f})}, {1, ts::tensor({3.f, 4.f})}});
  // 2. collectives (default group: every rank of the argument; or a ts::ProcessGroup / mesh dim)
  ts::dist::all_reduce(lt, ts::ReduceOp::SUM);
  ts::dist::broadcast(lt, /*src=*/0);
  std::vector<ts::Tensor> outputs = {ts::zeros_like(lt), ts::zeros_like(lt)};
  ts::dist::all_gather(outputs, lt);
  ts::Tensor in = ts::local_tensor({{0, ts::ones({4})}, {1, ts::ones({4})}});
  ts::Tensor out = ts::local_tensor({{0, ts::zeros({2})}, {1, ts::zeros({2})}});
  ts::dist::reduce_scatter_tensor(out, in, ts::ReduceOp::SUM);
  CHECK(ts::equal(outputs[1].reconcile(), ts::tensor({4.f, 6.f})));
  CHECK(ts::equal(out.reconcile(), ts::full({2}, 2.f)));
}

TEST_CASE("API contract: meshes, DTensors, dtypes, placements and comparisons") {
  // 3. meshes and DTensors
  ts::LocalMode mode(8);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  ts::Tensor x, w, b;
  {
    auto off = mode.disable();
    ts::Generator g(1);
    x = ts::randn({16, 8}, g);
    w = ts::randn({8, 12}, g);
    b = ts::randn({12}, g);
  }
  ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()});
  ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(1)});
  ts::DTensor db = ts::distribute_tensor(b, mesh, {ts::Replicate(), ts::Shard(0)});
  ts::DTensor dy = ts::relu(ts::matmul(dx, dw) + db);
  ts::Tensor y = dy.full_tensor().reconcile();
  CHECK(ts::allclose(y, ts::relu(ts::matmul(x, w) + b), 1e-5, 1e-5));
  CHECK(dy.placements() == ts::Placements{ts::Shard(0), ts::Shard(1)});
  CHECK(dy.to_local().is_local());
  CHECK(dy.redistribute({ts::Replicate(), ts::Replicate()}).placements()[1].is_replicate());
  CHECK(mesh["tp"].size() == 2);
  CHECK(mesh.size() == 8);
  CHECK(mesh.shape() == std::vector<int64_t>{4, 2});
  CHECK(mesh.dim_names() == std::vector<std::string>{"dp", "tp"});
  CHECK(mesh.group("dp").fibres() == std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}});

  // dtypes, shapes, placements
  CHECK(ts::kFloat32 != ts::kFloat64);
  CHECK(ts::kInt32 != ts::kInt64);
  CHECK(ts::kBool != ts::kInt32);
  auto off = mode.disable();
  ts::Tensor t = ts::arange(16).reshape({4, 4}).to(ts::kFloat32);
  ts::Tensor z = ts::zeros_like(t);
  CHECK(t.dtype() == ts::kFloat32);
  CHECK(t.shape() == ts::Shape{4, 4});
  CHECK(dy.placements()[0].is_shard());
  CHECK(ts::Replicate().is_replicate());
  CHECK(ts::Partial().is_partial());

  // comparisons used by tests and users
  CHECK_FALSE(ts::equal(t, z));
  CHECK(ts::allclose(t + 1, t + 1 + 1e-7f, /*rtol=*/1e-5, /*atol=*/1e-8));
  CHECK_FALSE(ts::allclose(t, t + 1e-7f, /*rtol=*/1e-5, /*atol=*/1e-8));  // 0 vs 1e-7 is beyond atol
}
