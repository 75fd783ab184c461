// AdamW (PyTorch: torch.optim.AdamW): the first step by hand, then several steps of every option
// against the double-precision oracle of reference.hpp, for float32 and float64 parameters.
#include "reference.hpp"

namespace ts = tessera;
using optim_test::AdamWOracle;
using optim_test::check_close;
using optim_test::kTheta0;
using optim_test::make;
using optim_test::Values;

namespace {

// Large gradients first, then small ones, so that amsgrad's running maximum differs from v.
const std::vector<Values> kAdamwGrads = {{3.0, -2.5, 4.0, -1.5, 2.0},
                                         {-0.4, 0.9, 0.05, 0.6, -0.15},
                                         {0.025, 0.015, -0.13, 0.08, 0.035},
                                         {-0.05, -0.06, 0.07, -0.09, 0.12},
                                         {0.2, -0.01, 0.3, 0.004, -0.5}};

void run_against_oracle(const ts::optim::AdamWOptions& options, ts::DType dtype) {
  Values theta = kTheta0;
  ts::Tensor p = make(theta, dtype);
  ts::optim::AdamW opt({p}, options);
  AdamWOracle oracle{options};
  for (size_t s = 0; s < kAdamwGrads.size(); ++s) {
    p.set_grad(make(kAdamwGrads[s], dtype));
    opt.step();
    oracle.step(theta, kAdamwGrads[s]);
    check_close(p, theta, dtype, "step " + std::to_string(s + 1));
  }
}

}  // namespace

TEST_CASE("AdamW's first step moves each element by lr against its gradient's sign") {
  // Step 1: m = (1-b1) g and v = (1-b2) g^2, so the bias-corrected m / sqrt(v) is g / |g|: the
  // update is lr * g / (|g| + eps), whatever the gradient's size. Weight decay first scales by 1 - lr*wd.
  ts::Tensor p = make({1.0, -2.0, 0.5}, ts::kFloat64);
  p.set_grad(make({1e-3, -40.0, 2.0}, ts::kFloat64));
  ts::optim::AdamW opt({p}, {.lr = 0.01, .eps = 0.0, .weight_decay = 0.5});
  opt.step();
  // 1*(1 - 0.005) - 0.01, -2*(0.995) + 0.01, 0.5*0.995 - 0.01
  const Values got = p.to_vector<double>();
  CHECK(got[0] == doctest::Approx(0.985).epsilon(1e-14));
  CHECK(got[1] == doctest::Approx(-1.98).epsilon(1e-14));
  CHECK(got[2] == doctest::Approx(0.4875).epsilon(1e-14));
}

TEST_CASE("AdamW's second step by hand") {
  // b1 = 0.5, b2 = 0.75, lr = 1, eps = 0, no decay; g = 2 then 1.
  // m = 1, then 0.5 + 0.5 = 1;  v = 1, then 0.75 + 0.25 = 1;
  // step 2: m_hat = 1 / (1 - 0.25) = 4/3, v_hat = 1 / (1 - 0.5625) = 16/7, update = (4/3) / (4/sqrt(7)).
  ts::Tensor p = make({0.0}, ts::kFloat64);
  ts::optim::AdamW opt({p}, {.lr = 1.0, .betas = {0.5, 0.75}, .eps = 0.0, .weight_decay = 0.0});
  p.set_grad(make({2.0}, ts::kFloat64));
  opt.step();
  CHECK(p.item<double>() == doctest::Approx(-1.0).epsilon(1e-14));
  p.set_grad(make({1.0}, ts::kFloat64));
  opt.step();
  CHECK(p.item<double>() == doctest::Approx(-1.0 - std::sqrt(7.0) / 3.0).epsilon(1e-14));
}

TEST_CASE("AdamW over five steps matches the oracle, float32 and float64") {
  const std::vector<std::pair<const char*, ts::optim::AdamWOptions>> cases = {
      {"defaults", {}},
      {"no weight decay", {.weight_decay = 0.0}},
      {"large lr and weight decay", {.lr = 0.05, .weight_decay = 0.3}},
      {"amsgrad", {.lr = 0.01, .amsgrad = true}},
      // A short memory for v, so that it falls well below its running maximum.
      {"amsgrad, small beta2", {.lr = 0.01, .betas = {0.9, 0.5}, .amsgrad = true}},
      {"maximize", {.lr = 0.01, .maximize = true}},
      {"amsgrad + maximize + other betas",
       {.lr = 0.02,
        .betas = {0.8, 0.99},
        .eps = 1e-6,
        .weight_decay = 0.1,
        .amsgrad = true,
        .maximize = true}},
      // beta1 < 0.5 takes lerp's other formula (weight 1 - beta1 >= 0.5).
      {"small beta1", {.lr = 0.01, .betas = {0.3, 0.9}}},
      {"beta1 = 0", {.lr = 0.01, .betas = {0.0, 0.5}}},
      {"large eps", {.lr = 0.1, .eps = 0.5}},
  };
  for (const auto& [name_bound, options] : cases) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    for (ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
      CAPTURE(name);
      CAPTURE(ts::dtype_name(dtype));
      run_against_oracle(options, dtype);
    }
  }
}

TEST_CASE("AdamW's amsgrad changes the result once v falls below its maximum") {
  // Guards against an amsgrad that is silently ignored: with large then small gradients and a short
  // memory for v (beta2 = 0.5), v falls far below its maximum and the two runs must part.
  auto run = [](bool amsgrad) {
    ts::Tensor p = make(kTheta0, ts::kFloat64);
    ts::optim::AdamW opt({p}, {.lr = 0.01, .betas = {0.9, 0.5}, .amsgrad = amsgrad});
    for (const Values& g : kAdamwGrads) {
      p.set_grad(make(g, ts::kFloat64));
      opt.step();
    }
    return p.to_vector<double>();
  };
  const Values with = run(true), without = run(false);
  for (size_t k = 0; k < with.size(); ++k) CHECK(std::abs(with[k] - without[k]) > 1e-4);
}

TEST_CASE("AdamW keeps a step count and moments per parameter") {
  // b only gets a gradient from the second step on: its first update is a first step (bias
  // corrections at t = 1), not a second.
  ts::Tensor a = make({1.0, -1.0}, ts::kFloat64);
  ts::Tensor b = make({0.25, 4.0, -2.0}, ts::kFloat32);
  const ts::optim::AdamWOptions options{.lr = 0.1, .weight_decay = 0.2};
  ts::optim::AdamW opt({a, b}, options);
  AdamWOracle oa{options}, ob{options};
  Values ta = {1.0, -1.0}, tb = {0.25, 4.0, -2.0};

  a.set_grad(make({0.5, 0.7}, ts::kFloat64));
  opt.step();
  oa.step(ta, {0.5, 0.7});
  check_close(a, ta, ts::kFloat64, "a");
  check_close(b, tb, ts::kFloat32, "b untouched: no gradient, not even weight decay");

  a.set_grad(make({-0.2, 0.1}, ts::kFloat64));
  b.set_grad(make({0.3, -0.6, 0.01}, ts::kFloat32));
  opt.step();
  oa.step(ta, {-0.2, 0.1});
  ob.step(tb, {0.3, -0.6, 0.01});
  check_close(a, ta, ts::kFloat64, "a");
  check_close(b, tb, ts::kFloat32, "b");
}
