// What every optimizer shares: parameters without a gradient are skipped, zero_grad in both modes,
// in-place updates seen by every handle, grad mode during a step, DTensor parameters, defaults, and
// every error with its message.
#include "reference.hpp"

namespace ts = tessera;
using optim_test::check_close;
using optim_test::make;
using optim_test::make_local;
using optim_test::SgdOracle;
using optim_test::Values;

TEST_CASE("defaults are PyTorch's") {
  const ts::optim::SGDOptions sgd;
  CHECK(sgd.lr == 1e-3);
  CHECK(sgd.momentum == 0.0);
  CHECK(sgd.dampening == 0.0);
  CHECK(sgd.weight_decay == 0.0);
  CHECK_FALSE(sgd.nesterov);
  CHECK_FALSE(sgd.maximize);
  const ts::optim::AdamWOptions adamw;
  CHECK(adamw.lr == 1e-3);
  CHECK(adamw.betas == std::pair<double, double>{0.9, 0.999});
  CHECK(adamw.eps == 1e-8);
  CHECK(adamw.weight_decay == 1e-2);
  CHECK_FALSE(adamw.amsgrad);
  CHECK_FALSE(adamw.maximize);
  // PyTorch's spelling (designated options) compiles, and the options are kept.
  ts::Tensor w = make({1.0, 2.0}, ts::kFloat32);
  ts::optim::AdamW opt({w}, {.lr = 1e-3, .weight_decay = 0.01});
  CHECK(opt.options().weight_decay == 0.01);
  CHECK(opt.options().betas.second == 0.999);
  REQUIRE(opt.params().size() == 1);
  CHECK(opt.params()[0].impl() == w.impl());
}

TEST_CASE("a parameter without a gradient is skipped, and its state starts on its first gradient") {
  ts::Tensor a = make({1.0, 2.0}, ts::kFloat64);
  ts::Tensor b = make({-0.5, 0.25, 4.0}, ts::kFloat64);
  const ts::optim::SGDOptions options{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.5};
  ts::optim::SGD opt({a, b}, options);
  SgdOracle oa{options}, ob{options};
  Values ta = {1.0, 2.0}, tb = {-0.5, 0.25, 4.0};

  a.set_grad(make({0.5, -1.0}, ts::kFloat64));
  opt.step();
  oa.step(ta, {0.5, -1.0});
  check_close(a, ta, ts::kFloat64, "a");
  // Not even weight decay touches b.
  CHECK(b.to_vector<double>() == Values{-0.5, 0.25, 4.0});

  a.set_grad(make({0.25, 0.75}, ts::kFloat64));
  b.set_grad(make({1.0, -2.0, 0.125}, ts::kFloat64));
  opt.step();
  oa.step(ta, {0.25, 0.75});
  ob.step(tb, {1.0, -2.0, 0.125});  // b's buffer starts here, at its first gradient
  check_close(a, ta, ts::kFloat64, "a");
  check_close(b, tb, ts::kFloat64, "b");
}

TEST_CASE("zero_grad drops the gradients by default, or fills them with zeros") {
  ts::Tensor a = make({1.0, 2.0}, ts::kFloat32);
  ts::Tensor b = make_local({{3.0}, {4.0, 5.0}, {}}, ts::kFloat64);
  ts::Tensor c = make({6.0}, ts::kFloat64);  // never has a gradient
  ts::optim::AdamW opt({a, b, c}, {.lr = 0.1, .weight_decay = 0.5});

  SUBCASE("set_to_none (the default): the next step changes nothing") {
    a.set_grad(make({0.5, -0.5}, ts::kFloat32));
    b.set_grad(make_local({{1.0}, {2.0, 3.0}, {}}, ts::kFloat64));
    opt.zero_grad();
    CHECK_FALSE(a.grad().defined());
    CHECK_FALSE(b.grad().defined());
    CHECK_FALSE(c.grad().defined());
    opt.step();
    CHECK(a.to_vector<float>() == std::vector<float>{1.0f, 2.0f});
    CHECK(b.shard(1).to_vector<double>() == Values{4.0, 5.0});
  }
  SUBCASE("set_to_none=false: zeros in place, and a step with zero gradients still decays") {
    ts::Tensor ga = make({0.5, -0.5}, ts::kFloat32);
    a.set_grad(ga);
    b.set_grad(make_local({{1.0}, {2.0, 3.0}, {}}, ts::kFloat64));
    opt.zero_grad(false);
    REQUIRE(a.grad().defined());
    CHECK(a.grad().impl() == ga.impl());  // the same gradient tensor, zeroed
    CHECK(ga.to_vector<float>() == std::vector<float>{0.0f, 0.0f});
    REQUIRE(b.grad().is_local());
    CHECK(b.grad().shard(1).to_vector<double>() == Values{0.0, 0.0});
    CHECK_FALSE(c.grad().defined());
    // A zero gradient is still a gradient (PyTorch): AdamW decays by 1 - lr*wd; with m = v = 0 the
    // Adam part is 0 / (0 + eps) = 0.
    opt.step();
    check_close(a, {0.95, 1.9}, ts::kFloat32);
    check_close(b.shard(1), {3.8, 4.75}, ts::kFloat64);
    CHECK(c.to_vector<double>() == Values{6.0});
  }
}

TEST_CASE("a step writes into the parameter's storage: aliases and views see it") {
  ts::Tensor p = ts::from_values<double>({1, 2, 3, 4}, {4}, ts::kFloat64);
  const ts::Tensor alias = p;
  const ts::Tensor view = p.view({2, 2});
  const void* data = p.data_ptr();
  p.set_grad(ts::from_values<double>({4, 3, 2, 1}, {4}, ts::kFloat64));
  ts::optim::SGD opt({p}, {.lr = 0.5});
  opt.step();
  CHECK(p.data_ptr() == data);
  CHECK(alias.to_vector<double>() == Values{-1, 0.5, 2, 3.5});
  CHECK(view.to_vector<double>() == Values{-1, 0.5, 2, 3.5});
  CHECK(opt.params()[0].to_vector<double>() == Values{-1, 0.5, 2, 3.5});
}

TEST_CASE("a step runs without grad mode, on parameters that require grad, and restores the mode") {
  ts::Tensor p = make({1.0, -1.0}, ts::kFloat32);
  p.set_requires_grad(true);
  p.set_grad(make({0.5, 0.25}, ts::kFloat32));
  ts::optim::AdamW opt({p});
  opt.step();
  CHECK(ts::is_grad_enabled());
  CHECK(p.requires_grad());
  CHECK(p.is_leaf());
  CHECK(p.grad_fn_name().empty());
  {
    ts::NoGradGuard outer;
    opt.step();
    CHECK_FALSE(ts::is_grad_enabled());
  }
  CHECK(ts::is_grad_enabled());
  // Outside a step, the same in-place write is refused on a tensor that requires grad: the step's
  // own NoGradGuard is what allows it.
  CHECK_THROWS_AS(p.copy_(make({0.0, 0.0}, ts::kFloat32)), ts::Error);
}

TEST_CASE("DTensor parameters are optimized through their local tensor") {
  ts::LocalMode mode(3);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::Tensor x;
  {
    auto plain = mode.disable();
    x = ts::from_values<double>({1, 2, 3, 4, 5, 6, 7}, {7}, ts::kFloat64);
  }
  const ts::DTensor dt = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  ts::optim::SGD opt(std::vector<ts::DTensor>{dt}, {.lr = 0.1});
  REQUIRE(opt.params().size() == 1);
  CHECK(opt.params()[0].is_local());
  CHECK(opt.params()[0].local_impl() == dt.to_local().local_impl());
  // No gradient yet: a step leaves every shard as it was.
  opt.step();
  CHECK(ts::equal(dt.full_tensor().reconcile(), x));

  CHECK_THROWS_WITH_AS(ts::optim::AdamW(std::vector<ts::DTensor>{}),
                       doctest::Contains("AdamW: optimizer got an empty parameter list"), ts::Error);
  const ts::DTensor ints = ts::distribute_tensor(ts::arange(6), mesh, {ts::Shard(0)});
  CHECK_THROWS_WITH_AS(ts::optim::SGD(std::vector<ts::DTensor>{dt, ints}),
                       doctest::Contains("SGD: parameter 1 has dtype int64"), ts::Error);
}

TEST_CASE("parameter list errors name the parameter") {
  using ts::optim::AdamW;
  using ts::optim::SGD;
  ts::Tensor p = make({1.0}, ts::kFloat32);
  CHECK_THROWS_WITH_AS(SGD(std::vector<ts::Tensor>{}),
                       "SGD: optimizer got an empty parameter list; pass at least one "
                       "tensor to optimize",
                       ts::Error);
  CHECK_THROWS_WITH_AS(AdamW(std::vector<ts::Tensor>{}),
                       doctest::Contains("AdamW: optimizer got an empty parameter list"), ts::Error);
  CHECK_THROWS_WITH_AS(SGD({p, ts::Tensor()}), doctest::Contains("SGD: parameter 1 is undefined"), ts::Error);
  CHECK_THROWS_WITH_AS(
      AdamW({p, ts::tensor({1, 2})}),
      doctest::Contains("AdamW: parameter 1 has dtype int64, but only floating-point tensors"), ts::Error);
  CHECK_THROWS_WITH_AS(SGD({ts::ones({2}, ts::kBool)}), doctest::Contains("parameter 0 has dtype bool"),
                       ts::Error);
  const ts::Tensor q = make({2.0}, ts::kFloat32);
  const ts::Tensor alias = p;  // NOLINT(performance-unnecessary-copy-initialization): a second handle
  CHECK_THROWS_WITH_AS(SGD({p, q, alias}),
                       doctest::Contains("SGD: parameter 2 is the same tensor as parameter 0"), ts::Error);
  // A view of a parameter is another tensor (as in PyTorch, which does not look at storage).
  CHECK_NOTHROW(SGD({p, p.view({1})}));
}

TEST_CASE("gradient errors at step name the parameter, and leave every parameter as it was") {
  ts::Tensor a = make({1.0, 2.0}, ts::kFloat32);
  ts::Tensor b = make({3.0, 4.0}, ts::kFloat32);
  ts::optim::SGD opt({a, b}, {.lr = 0.5, .momentum = 0.9});
  a.set_grad(make({1.0, -1.0}, ts::kFloat32));
  b.set_grad(make({1.0, 1.0}, ts::kFloat64));
  CHECK_THROWS_WITH_AS(
      opt.step(), "SGD: parameter 1 is float32 but its gradient is float64; they must have the same dtype",
      ts::Error);
  // Every gradient is checked before any parameter changes: a, whose gradient is fine, is untouched.
  CHECK(a.to_vector<float>() == std::vector<float>{1.0f, 2.0f});
  CHECK(b.to_vector<float>() == std::vector<float>{3.0f, 4.0f});
  b.set_grad(make_local({{1.0, 1.0}, {2.0, 2.0}}, ts::kFloat32));
  CHECK_THROWS_WITH_AS(opt.step(),
                       doctest::Contains("SGD: parameter 1 is a plain tensor but its gradient is a local "
                                         "tensor over ranks"),
                       ts::Error);
  ts::Tensor l = make_local({{1.0}, {2.0}}, ts::kFloat64);
  l.set_grad(ts::local_tensor({{0, make({1.0}, ts::kFloat64)}, {2, make({1.0}, ts::kFloat64)}}));
  ts::optim::AdamW adamw({l});
  CHECK_THROWS_WITH_AS(adamw.step(), doctest::Contains("AdamW: parameter 0 is a local tensor over ranks"),
                       ts::Error);
}

TEST_CASE("SGD option errors name the option, its value and what is expected") {
  using ts::optim::SGD;
  ts::Tensor p = make({1.0}, ts::kFloat32);
  CHECK_THROWS_WITH_AS(SGD({p}, {.lr = -0.1}), "SGD: invalid lr value -0.1; expected lr >= 0", ts::Error);
  CHECK_THROWS_WITH_AS(SGD({p}, {.lr = std::nan("")}), doctest::Contains("invalid lr value nan"), ts::Error);
  CHECK_THROWS_WITH_AS(SGD({p}, {.momentum = -0.5}),
                       "SGD: invalid momentum value -0.5; expected momentum >= 0", ts::Error);
  CHECK_THROWS_WITH_AS(SGD({p}, {.weight_decay = -1e-4}),
                       "SGD: invalid weight_decay value -0.0001; expected weight_decay >= 0", ts::Error);
  CHECK_THROWS_WITH_AS(
      SGD({p}, {.nesterov = true}),
      "SGD: nesterov momentum requires momentum > 0 and dampening == 0, but momentum is 0 and "
      "dampening is 0",
      ts::Error);
  CHECK_THROWS_WITH_AS(SGD({p}, {.momentum = 0.9, .dampening = 0.1, .nesterov = true}),
                       doctest::Contains("but momentum is 0.9 and dampening is 0.1"), ts::Error);
  // Zero is valid everywhere; dampening is not range-checked (PyTorch neither).
  CHECK_NOTHROW(SGD({p}, {.lr = 0.0, .momentum = 0.0, .dampening = -0.5, .weight_decay = 0.0}));
}

TEST_CASE("AdamW option errors name the option, its value and what is expected") {
  using ts::optim::AdamW;
  ts::Tensor p = make({1.0}, ts::kFloat32);
  CHECK_THROWS_WITH_AS(AdamW({p}, {.lr = -1e-3}), "AdamW: invalid lr value -0.001; expected lr >= 0",
                       ts::Error);
  CHECK_THROWS_WITH_AS(AdamW({p}, {.eps = -1e-8}), "AdamW: invalid eps value -1e-08; expected eps >= 0",
                       ts::Error);
  CHECK_THROWS_WITH_AS(AdamW({p}, {.betas = {1.0, 0.999}}),
                       "AdamW: invalid beta at index 0 (betas.first): 1; expected 0 <= beta < 1", ts::Error);
  CHECK_THROWS_WITH_AS(AdamW({p}, {.betas = {-0.1, 0.999}}),
                       doctest::Contains("beta at index 0 (betas.first): -0.1"), ts::Error);
  CHECK_THROWS_WITH_AS(AdamW({p}, {.betas = {0.9, 1.0}}),
                       doctest::Contains("beta at index 1 (betas.second): 1;"), ts::Error);
  CHECK_THROWS_WITH_AS(AdamW({p}, {.betas = {0.9, std::nan("")}}),
                       doctest::Contains("beta at index 1 (betas.second): nan"), ts::Error);
  CHECK_THROWS_WITH_AS(AdamW({p}, {.weight_decay = -0.01}),
                       "AdamW: invalid weight_decay value -0.01; expected weight_decay >= 0", ts::Error);
  CHECK_NOTHROW(AdamW({p}, {.lr = 0.0, .betas = {0.0, 0.0}, .eps = 0.0, .weight_decay = 0.0}));
}
