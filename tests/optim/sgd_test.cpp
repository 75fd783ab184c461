// SGD (PyTorch: torch.optim.SGD): hand-computed first steps, then several steps of every option
// against the double-precision oracle of reference.hpp, for float32 and float64 parameters.
#include "reference.hpp"

namespace ts = tessera;
using optim_test::check_close;
using optim_test::kTheta0;
using optim_test::make;
using optim_test::SgdOracle;
using optim_test::Values;

namespace {

// Gradients of four steps: distinct values, signs that change between steps.
const std::vector<Values> kSgdGrads = {{0.3, -0.7, 1.1, -0.2, 0.45},
                                       {-0.4, 0.9, 0.05, 0.6, -0.15},
                                       {0.25, 0.15, -1.3, 0.8, 0.35},
                                       {-0.05, -0.6, 0.7, -0.9, 1.2}};

// Four steps of `options` on a parameter of `dtype`, checked against the oracle after each step.
void run_against_oracle(const ts::optim::SGDOptions& options, ts::DType dtype) {
  Values theta = kTheta0;
  ts::Tensor p = make(theta, dtype);
  ts::optim::SGD opt({p}, options);
  SgdOracle oracle{options};
  for (size_t s = 0; s < kSgdGrads.size(); ++s) {
    p.set_grad(make(kSgdGrads[s], dtype));
    opt.step();
    oracle.step(theta, kSgdGrads[s]);
    check_close(p, theta, dtype, "step " + std::to_string(s + 1));
  }
}

// One dense parameter [p0, p1], stepped with each gradient in turn; returns its values after each.
std::vector<Values> steps_of(const ts::optim::SGDOptions& options, const Values& p0,
                             const std::vector<Values>& grads) {
  ts::Tensor p = make(p0, ts::kFloat64);
  ts::optim::SGD opt({p}, options);
  std::vector<Values> out;
  for (const Values& g : grads) {
    p.set_grad(make(g, ts::kFloat64));
    opt.step();
    out.push_back(p.to_vector<double>());
  }
  return out;
}

void check_steps(const std::vector<Values>& actual, const std::vector<Values>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t s = 0; s < expected.size(); ++s)
    for (size_t k = 0; k < expected[s].size(); ++k)
      CHECK_MESSAGE(actual[s][k] == doctest::Approx(expected[s][k]).epsilon(1e-14),
                    "step " << s + 1 << " index " << k);
}

}  // namespace

TEST_CASE("SGD by hand: plain, momentum, dampening, nesterov, weight decay, maximize") {
  // p - lr*g: 1 - 0.1*0.5, -2 - 0.1*0.25; then 0.95 + 0.1, -2.025 - 0.2.
  check_steps(steps_of({.lr = 0.1}, {1.0, -2.0}, {{0.5, 0.25}, {-1.0, 2.0}}),
              {{0.95, -2.025}, {1.05, -2.225}});
  // buf = 1 (the first gradient), 0.9*1 + 1 = 1.9, 0.9*1.9 + 0 = 1.71.
  check_steps(steps_of({.lr = 0.1, .momentum = 0.9}, {1.0}, {{1.0}, {1.0}, {0.0}}), {{0.9}, {0.71}, {0.539}});
  // The first step ignores dampening (buf = g); then buf = 0.9*1 + (1-0.5)*1 = 1.4.
  check_steps(steps_of({.lr = 0.1, .momentum = 0.9, .dampening = 0.5}, {1.0}, {{1.0}, {1.0}}),
              {{0.9}, {0.76}});
  // Nesterov steps along g + 0.9*buf: 1 + 0.9 = 1.9, then buf = 1.9 and 1 + 0.9*1.9 = 2.71.
  check_steps(steps_of({.lr = 0.1, .momentum = 0.9, .nesterov = true}, {1.0}, {{1.0}, {1.0}}),
              {{0.81}, {0.539}});
  // L2 decay adds wd*p to the gradient: 0.5 + 0.1*2 = 0.7.
  check_steps(steps_of({.lr = 0.1, .weight_decay = 0.1}, {2.0}, {{0.5}}), {{1.93}});
  // maximize climbs the gradient.
  check_steps(steps_of({.lr = 0.1, .maximize = true}, {1.0}, {{0.5}}), {{1.05}});
}

TEST_CASE("SGD over four steps matches the oracle, float32 and float64") {
  const std::vector<std::pair<const char*, ts::optim::SGDOptions>> cases = {
      {"plain", {.lr = 0.1}},
      {"momentum", {.lr = 0.05, .momentum = 0.9}},
      {"momentum + dampening", {.lr = 0.05, .momentum = 0.8, .dampening = 0.3}},
      {"nesterov", {.lr = 0.05, .momentum = 0.7, .nesterov = true}},
      {"weight decay", {.lr = 0.1, .weight_decay = 0.2}},
      {"weight decay + momentum", {.lr = 0.05, .momentum = 0.9, .weight_decay = 0.01}},
      {"maximize", {.lr = 0.1, .maximize = true}},
      {"maximize + nesterov + weight decay",
       {.lr = 0.02, .momentum = 0.6, .weight_decay = 0.05, .nesterov = true, .maximize = true}},
      {"everything but nesterov",
       {.lr = 0.03, .momentum = 0.5, .dampening = 0.25, .weight_decay = 0.1, .maximize = true}},
  };
  for (const auto& [case_name, options] : cases) {
    const char* name = case_name;  // named again: clang 14 cannot capture a structured binding
    for (ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
      CAPTURE(name);
      CAPTURE(ts::dtype_name(dtype));
      run_against_oracle(options, dtype);
    }
  }
}

TEST_CASE("SGD on a 2-d parameter updates every element, keeping shape and dtype") {
  ts::Tensor p = ts::from_values<double>({1, 2, 3, 4, 5, 6}, {2, 3}, ts::kFloat64);
  p.set_grad(ts::from_values<double>({6, 5, 4, 3, 2, 1}, {2, 3}, ts::kFloat64));
  ts::optim::SGD opt({p}, {.lr = 0.5});
  opt.step();
  CHECK(p.sizes() == ts::Shape{2, 3});
  CHECK(p.to_vector<double>() == Values{-2, -0.5, 1, 2.5, 4, 5.5});
}

TEST_CASE("SGD momentum buffers are per parameter") {
  ts::Tensor a = make({1.0, 2.0}, ts::kFloat64);
  ts::Tensor b = make({-3.0}, ts::kFloat32);
  ts::optim::SGD opt({a, b}, {.lr = 0.1, .momentum = 0.5});
  Values ta = {1.0, 2.0}, tb = {-3.0};
  SgdOracle oa{opt.options()}, ob{opt.options()};
  const std::vector<Values> ga = {{1.0, -2.0}, {0.5, 0.25}, {-1.5, 3.0}};
  const std::vector<Values> gb = {{4.0}, {-0.5}, {2.5}};
  for (size_t s = 0; s < ga.size(); ++s) {
    a.set_grad(make(ga[s], ts::kFloat64));
    b.set_grad(make(gb[s], ts::kFloat32));
    opt.step();
    oa.step(ta, ga[s]);
    ob.step(tb, gb[s]);
    check_close(a, ta, ts::kFloat64, "a");
    check_close(b, tb, ts::kFloat32, "b");
  }
}
