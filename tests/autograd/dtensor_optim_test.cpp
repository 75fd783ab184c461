// Optimizers over DTensor parameters: each rank updates its own shard with its own gradient
// shard, so the updated global parameters are the dense update of the dense gradients (worked
// out by hand here from mlp_oracle.hpp's gradients and AdamW's first-step formula).
#include <doctest/doctest.h>

#include <cmath>

#include <tessera/tessera.hpp>

#include "dp_tp_mlp.hpp"
#include "mlp_oracle.hpp"

namespace ts = tessera;

namespace {

using oracle::dense;

// AdamW's first step from zero moments: m^ = g, v^ = g^2, so p <- p (1 - lr wd) - lr g / (|g| + eps).
std::vector<double> adamw_first_step(const std::vector<double>& p, const std::vector<double>& g, double lr,
                                     double wd, double eps) {
  std::vector<double> out(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    out[i] = p[i] * (1 - lr * wd) - lr * g[i] / (std::sqrt(g[i] * g[i]) + eps);
  return out;
}

}  // namespace

TEST_CASE(
    "AdamW over DTensor parameters on a (2, 2) mesh: one step equals the dense step, layouts are kept") {
  const oracle::Mlp m = oracle::make_mlp(4, 3, 6, 2);
  const oracle::MlpGrads grads = oracle::mlp_grads(m);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  const oracle::DpTpMlp mlp = oracle::distribute_dp_tp(m, mesh);
  const ts::DTensor& w1 = mlp.w1;
  const ts::DTensor& w2 = mlp.w2;
  ts::optim::AdamW opt({w1, w2}, {.lr = 1e-2, .weight_decay = 0.1});
  // The tp partial sums stay pending here: the loss is reduced over both mesh dims.
  const ts::DTensor loss = ts::sum(ts::mul(ts::matmul(ts::relu(ts::matmul(mlp.x, w1)), w2), mlp.c));
  loss.backward();
  opt.step();
  CHECK(w1.placements() == ts::Placements{ts::Replicate(), ts::Shard(1)});
  CHECK(w1.to_local().shard(0).sizes() == ts::Shape{3, 3});  // each rank still holds its shard only
  const std::vector<double> w1_expected = adamw_first_step(m.w1, grads.dw1, 1e-2, 0.1, 1e-8);
  const std::vector<double> w2_expected = adamw_first_step(m.w2, grads.dw2, 1e-2, 0.1, 1e-8);
  ts::NoGradGuard off;
  const std::vector<double> w1_got = w1.full_tensor().reconcile().to_vector<double>();
  const std::vector<double> w2_got = w2.full_tensor().reconcile().to_vector<double>();
  for (size_t i = 0; i < w1_expected.size(); ++i)
    CHECK(w1_got[i] == doctest::Approx(w1_expected[i]).epsilon(1e-12));
  for (size_t i = 0; i < w2_expected.size(); ++i)
    CHECK(w2_got[i] == doctest::Approx(w2_expected[i]).epsilon(1e-12));
  opt.zero_grad();
  CHECK_FALSE(w1.has_grad());
}

TEST_CASE("SGD refuses a Partial DTensor parameter, naming it") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::RankMap<ts::Tensor> shards;
  shards.set(0, dense({1, 2}, {2}));
  shards.set(1, dense({3, 4}, {2}));
  const ts::DTensor partial = ts::from_local(ts::local_tensor(std::move(shards)), mesh, {ts::Partial()});
  CHECK_THROWS_WITH_AS(ts::optim::SGD({partial}), doctest::Contains("Partial"), ts::Error);
}
