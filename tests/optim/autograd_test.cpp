// The training loop end to end: forward, loss.backward(), step, zero_grad, with gradients from
// autograd instead of set_grad, on a dense parameter and on a local one.
#include "reference.hpp"

namespace ts = tessera;
using optim_test::check_close;
using optim_test::make;
using optim_test::make_local;
using optim_test::SgdOracle;
using optim_test::Values;

TEST_CASE("backward then step: sum(w*w*x) has gradient 2*w*x") {
  const Values w0 = {1.0, -2.0, 0.5}, x_values = {3.0, 0.25, -4.0};
  ts::Tensor w = make(w0, ts::kFloat64);
  w.set_requires_grad(true);
  const ts::Tensor x = make(x_values, ts::kFloat64);
  const ts::optim::SGDOptions options{.lr = 0.1, .momentum = 0.5};
  ts::optim::SGD opt({w}, options);
  SgdOracle oracle{options};
  Values theta = w0;
  for (int s = 0; s < 3; ++s) {
    ts::Tensor loss = ts::sum(w * w * x);
    CHECK_FALSE(loss.grad_fn_name().empty());
    loss.backward();
    Values grad;
    for (size_t k = 0; k < theta.size(); ++k) grad.push_back(2 * theta[k] * x_values[k]);
    check_close(w.grad(), grad, ts::kFloat64, "gradient");
    opt.step();
    oracle.step(theta, grad);
    check_close(w, theta, ts::kFloat64, "step " + std::to_string(s + 1));
    opt.zero_grad();
    CHECK_FALSE(w.grad().defined());
    CHECK(w.requires_grad());
  }
}

TEST_CASE("backward then step on a local parameter: each rank its own gradient") {
  // Shard r of x differs per rank, so does the gradient of sum(w * x) = x, and so does each step.
  ts::Tensor w = make_local({{1.0, 2.0}, {-1.0}, {0.5, 0.25, 4.0}}, ts::kFloat64);
  w.set_requires_grad(true);
  const ts::Tensor x = make_local({{0.5, -1.0}, {2.0}, {-0.25, 1.5, 3.0}}, ts::kFloat64);
  ts::optim::SGD opt({w}, {.lr = 0.1});
  ts::sum(w * x).backward();
  REQUIRE(w.grad().is_local());
  opt.step();
  check_close(w.shard(0), {0.95, 2.1}, ts::kFloat64);
  check_close(w.shard(1), {-1.2}, ts::kFloat64);
  check_close(w.shard(2), {0.525, 0.1, 3.7}, ts::kFloat64);
}
