// DTensor autograd: gradients carry placements, every sharding rule's backward stays sharded,
// and the collectives of a backward are the ones Megatron / data parallelism need. Expected
// gradients come from the MLP written out by hand (mlp_oracle.hpp).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "dp_tp_mlp.hpp"
#include "mlp_oracle.hpp"

namespace ts = tessera;

namespace {

using oracle::dense;

void check_near(const ts::Tensor& t, const std::vector<double>& expected) {
  const std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(got[i] == doctest::Approx(expected[i]).epsilon(1e-10), "index " << i);
}

// The global value of a DTensor (its full_tensor, whose shards are all equal).
ts::Tensor global(const ts::DTensor& t) {
  ts::NoGradGuard off;
  return t.full_tensor().reconcile();
}

// A local tensor holding `t` on every rank of `mesh`.
ts::Tensor on_every_rank(const ts::Tensor& t, const ts::DeviceMesh& mesh) {
  ts::RankMap<ts::Tensor> shards;
  for (int r : mesh.ranks()) shards.set(r, t.clone());
  return ts::local_tensor(std::move(shards));
}

}  // namespace

TEST_CASE("Megatron TP MLP on a 1-d mesh: one all_reduce forward, one backward, gradients stay sharded") {
  const oracle::Mlp m = oracle::make_mlp(5, 6, 8, 3);
  const oracle::MlpGrads expected = oracle::mlp_grads(m);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4}, {"tp"});
  // The activation enters replicated and requires grad (it comes from an earlier layer).
  ts::Tensor x_local = on_every_rank(dense(m.x, {m.n, m.d}), mesh).set_requires_grad(true);
  const ts::DTensor x = ts::from_local(x_local, mesh, {ts::Replicate()});
  ts::DTensor w1 =
      ts::distribute_tensor(dense(m.w1, {m.d, m.k}), mesh, {ts::Shard(1)}).set_requires_grad(true);
  ts::DTensor w2 =
      ts::distribute_tensor(dense(m.w2, {m.k, m.o}), mesh, {ts::Shard(0)}).set_requires_grad(true);
  const ts::DTensor c = ts::distribute_tensor(dense(m.c, {m.n, m.o}), mesh, {ts::Replicate()});

  ts::DTensor loss = [&] {
    ts::CommCounter forward;
    const ts::DTensor partial = ts::matmul(ts::relu(ts::matmul(x, w1)), w2);
    CHECK(partial.placements()[0].is_partial());
    const ts::DTensor y = partial.redistribute({ts::Replicate()});
    ts::DTensor l = ts::sum(ts::mul(y, c));
    CHECK(forward.calls("all_reduce") == 1);
    CHECK(forward.calls() == 1);
    return l;
  }();
  CHECK(loss.to_local().shard(0).item<double>() == doctest::Approx(expected.loss).epsilon(1e-12));

  ts::CommCounter backward;
  loss.backward();
  CHECK(backward.calls("all_reduce") == 1);  // Megatron's f: the input gradient of the column-parallel layer
  CHECK(backward.calls() == 1);
  CHECK(w1.grad().placements() == ts::Placements{ts::Shard(1)});
  CHECK(w2.grad().placements() == ts::Placements{ts::Shard(0)});
  check_near(global(w1.grad()), expected.dw1);
  check_near(global(w2.grad()), expected.dw2);
  for (int r = 0; r < 4; ++r) check_near(x_local.grad().shard(r), expected.dx);
}

TEST_CASE(
    "data parallel on 3 ranks (uneven rows): Replicate weights get Partial gradients, reduced once when "
    "used") {
  const oracle::Mlp m = oracle::make_mlp(7, 4, 5, 2);
  const oracle::MlpGrads expected = oracle::mlp_grads(m);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ts::DTensor x = ts::distribute_tensor(dense(m.x, {m.n, m.d}), mesh, {ts::Shard(0)});
  const ts::DTensor c = ts::distribute_tensor(dense(m.c, {m.n, m.o}), mesh, {ts::Shard(0)});
  ts::DTensor w1 =
      ts::distribute_tensor(dense(m.w1, {m.d, m.k}), mesh, {ts::Replicate()}).set_requires_grad(true);
  ts::DTensor w2 =
      ts::distribute_tensor(dense(m.w2, {m.k, m.o}), mesh, {ts::Replicate()}).set_requires_grad(true);
  const ts::DTensor loss = ts::sum(ts::mul(ts::matmul(ts::relu(ts::matmul(x, w1)), w2), c));
  CHECK(loss.placements()[0].is_partial());
  CHECK(global(loss).item<double>() == doctest::Approx(expected.loss).epsilon(1e-12));
  {
    ts::CommCounter backward;
    loss.backward();
    CHECK(backward.calls() == 0);  // the contributions stay pending, as in PyTorch
  }
  REQUIRE(w1.has_grad());
  CHECK(w1.grad().placements() == ts::Placements{ts::Partial()});
  // The ranks' contributions (from their own rows of x) add up to the whole gradient.
  std::vector<double> summed(expected.dw1.size(), 0.0);
  for (int r = 0; r < 3; ++r) {
    const std::vector<double> part = w1.grad().to_local().shard(r).to_vector<double>();
    for (size_t i = 0; i < part.size(); ++i) summed[i] += part[i];
  }
  check_near(dense(summed, {m.d, m.k}), expected.dw1);
  check_near(global(w1.grad()), expected.dw1);
  check_near(global(w2.grad()), expected.dw2);
  // An optimizer step reduces each pending gradient once, then updates every replica alike.
  ts::optim::SGD sgd({w1, w2}, {.lr = 0.5});
  ts::CommCounter step;
  sgd.step();
  CHECK(step.calls("all_reduce") == 2);
  std::vector<double> w1_expected = m.w1;
  for (size_t i = 0; i < w1_expected.size(); ++i) w1_expected[i] -= 0.5 * expected.dw1[i];
  for (int r = 0; r < 3; ++r) check_near(w1.to_local().shard(r), w1_expected);
}

TEST_CASE("a Replicate weight read by two sharded ops: one pending gradient, reduced once") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  const std::vector<double> xv = oracle::distinct(8, 3), wv = oracle::distinct(2, 4);
  const ts::DTensor x = ts::distribute_tensor(dense(xv, {4, 2}), mesh, {ts::Shard(0)});
  ts::DTensor w = ts::distribute_tensor(dense(wv, {2}), mesh, {ts::Replicate()}).set_requires_grad(true);
  // loss = sum(x * w) + sum(x * x * w): dL/dw_j = sum_i (x_ij + x_ij^2).
  const ts::DTensor loss = ts::add(ts::sum(ts::mul(x, w)), ts::sum(ts::mul(ts::mul(x, x), w)));
  loss.backward();
  CHECK(w.grad().placements() == ts::Placements{ts::Partial()});
  std::vector<double> expected(2, 0.0);
  for (size_t i = 0; i < xv.size(); ++i) expected[i % 2] += xv[i] + xv[i] * xv[i];
  ts::CommCounter use;
  check_near(global(w.grad()), expected);
  CHECK(use.calls("all_reduce") == 1);
  // autograd::grad returns the reduced gradient on every rank, and leaves grad() alone.
  const ts::DTensor again = ts::add(ts::sum(ts::mul(x, w)), ts::sum(ts::mul(ts::mul(x, x), w)));
  const ts::Tensor captured = ts::autograd::grad({again.to_local()}, {w.to_local()})[0];
  for (int r = 0; r < 2; ++r) check_near(captured.shard(r), expected);
  CHECK(w.grad().placements() == ts::Placements{ts::Partial()});
}

TEST_CASE(
    "DP x TP on a (2, 4) mesh: gradients match the hand-written MLP, pending over dp, sharded over tp") {
  const oracle::Mlp m = oracle::make_mlp(6, 5, 8, 3);
  const oracle::MlpGrads expected = oracle::mlp_grads(m);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 4}, {"dp", "tp"});
  const oracle::DpTpMlp mlp = oracle::distribute_dp_tp(m, mesh);
  const ts::DTensor& w1 = mlp.w1;
  const ts::DTensor& w2 = mlp.w2;
  const ts::DTensor loss = mlp.loss();
  ts::CommCounter backward;
  loss.backward();
  CHECK(backward.calls() == 0);  // the weights' dp contributions stay pending
  CHECK(w1.grad().placements() == ts::Placements{ts::Partial(), ts::Shard(1)});
  CHECK(w2.grad().placements() == ts::Placements{ts::Partial(), ts::Shard(0)});
  ts::CommCounter use;
  ts::NoGradGuard off;
  const ts::DTensor reduced = w1.grad().redistribute({ts::Replicate(), ts::Shard(1)});
  for (const ts::CommCounter::Entry& e : use.entries()) CHECK_MESSAGE(e.mesh_dim == "dp", e.collective);
  CHECK(use.calls("all_reduce") == 1);
  check_near(global(w1.grad()), expected.dw1);
  check_near(global(w2.grad()), expected.dw2);
}

TEST_CASE("redistribute and full_tensor are differentiable, the gradient is placed like the DTensor") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const std::vector<double> values = oracle::distinct(8, 5);
  ts::DTensor x = ts::distribute_tensor(dense(values, {8}), mesh, {ts::Shard(0)}).set_requires_grad(true);
  const std::vector<double> weights = oracle::distinct(8, 9);
  const ts::Tensor w = dense(weights, {8});
  // loss = sum(full(x) * w) on every rank; the global loss is the one value every rank holds.
  ts::Tensor full = x.full_tensor();
  CHECK(full.grad_fn_name() == "RedistributeBackward");
  ts::CommCounter backward;
  ts::sum(full * w).backward();
  CHECK(backward.calls() == 0);  // Replicate -> Shard(0) backward is a local slice
  CHECK(x.grad().placements() == ts::Placements{ts::Shard(0)});
  check_near(global(x.grad()), weights);
}

TEST_CASE("DTensor autograd errors: no gradient yet, a non-scalar without a gradient") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::DTensor x =
      ts::distribute_tensor(dense({1, 2, 3, 4}, {4}), mesh, {ts::Shard(0)}).set_requires_grad(true);
  CHECK_FALSE(x.has_grad());
  CHECK_THROWS_WITH_AS(x.grad(), doctest::Contains("no gradient yet"), ts::Error);
  const ts::DTensor y = ts::mul(x, x);
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("shape [4]"), ts::Error);
  y.backward(ts::distribute_tensor(dense({1, 1, 1, 1}, {4}), mesh, {ts::Replicate()}));
  check_near(global(x.grad()), {2, 4, 6, 8});
  // distribute_tensor keeps requires_grad, as a new leaf.
  const ts::Tensor t = dense({1, 2}, {2}).set_requires_grad(true);
  const ts::DTensor d = ts::distribute_tensor(t, mesh, {ts::Replicate()});
  CHECK(d.requires_grad());
  CHECK(d.is_leaf());
}

TEST_CASE("a redistribution that changes nothing records no node: the result is still the leaf") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::DTensor w = ts::distribute_tensor(dense(oracle::distinct(6, 1), {3, 2}), mesh, {ts::Shard(0)})
                      .set_requires_grad(true);
  const ts::DTensor same = w.redistribute({ts::Shard(0)});
  CHECK(same.to_local().is_leaf());
  ts::sum(same * 2.0).backward();
  check_near(global(w.grad()), std::vector<double>(6, 2.0));
}
