// Optimizers over module parameters (nn::Parameter, what module->parameters() returns): a list
// mixing Tensor and DTensor parameters, the errors that name a parameter, and the learning rate
// that step() reads (lr, set_lr, initial_lr).
#include "reference.hpp"

namespace ts = tessera;
using optim_test::AdamWOracle;
using optim_test::check_close;
using optim_test::make;
using optim_test::SgdOracle;
using optim_test::Values;

TEST_CASE("SGD and AdamW step a parameter list that mixes a Tensor and a sharded DTensor") {
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::Tensor dense_value, full_value, full_grad, sgd_dense_grad, adamw_dense_grad;
  {
    // Plain tensors: made under LocalMode they would be local tensors (one value per rank).
    auto plain = mode.disable();
    dense_value = make({0.5, -1.5}, ts::kFloat64);
    sgd_dense_grad = make({1.0, 2.0}, ts::kFloat64);
    adamw_dense_grad = make({-1.0, 0.5}, ts::kFloat64);
    // 7 elements over 3 ranks: shards of 3, 3 and 1 (uneven).
    full_value = make({1, 2, 3, 4, 5, 6, 7}, ts::kFloat64);
    full_grad = make({0.5, -0.25, 1, 2, -1, 0.125, 3}, ts::kFloat64);
  }
  const ts::nn::Parameter dense(dense_value);
  const ts::nn::Parameter sharded(ts::distribute_tensor(full_value, mesh, {ts::Shard(0)}));
  const std::vector<ts::nn::Parameter> params = {dense, sharded};

  SUBCASE("SGD") {
    const ts::optim::SGDOptions options{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
    ts::optim::SGD opt(params, options);
    REQUIRE(opt.params().size() == 2);
    CHECK(opt.params()[0].impl() == dense_value.impl());
    CHECK(opt.params()[1].local_impl() == sharded.local().local_impl());
    SgdOracle dense_oracle{options}, sharded_oracle{options};
    Values dense_expected = {0.5, -1.5}, sharded_expected = {1, 2, 3, 4, 5, 6, 7};
    for (int step = 0; step < 2; ++step) {
      ts::Tensor(dense.tensor()).set_grad(sgd_dense_grad);
      ts::DTensor grad = ts::distribute_tensor(full_grad, mesh, {ts::Shard(0)});
      ts::Tensor(sharded.local()).set_grad(grad.to_local());
      opt.step();
      dense_oracle.step(dense_expected, {1.0, 2.0});
      sharded_oracle.step(sharded_expected, {0.5, -0.25, 1, 2, -1, 0.125, 3});
    }
    check_close(dense.tensor(), dense_expected, ts::kFloat64, "dense");
    check_close(sharded.dtensor().full_tensor().reconcile(), sharded_expected, ts::kFloat64, "sharded");
  }
  SUBCASE("AdamW") {
    const ts::optim::AdamWOptions options{.lr = 0.01, .weight_decay = 0.1};
    ts::optim::AdamW opt(params, options);
    AdamWOracle dense_oracle{options}, sharded_oracle{options};
    Values dense_expected = {0.5, -1.5}, sharded_expected = {1, 2, 3, 4, 5, 6, 7};
    for (int step = 0; step < 3; ++step) {
      ts::Tensor(dense.tensor()).set_grad(adamw_dense_grad);
      ts::Tensor(sharded.local()).set_grad(ts::distribute_tensor(full_grad, mesh, {ts::Shard(0)}).to_local());
      opt.step();
      dense_oracle.step(dense_expected, {-1.0, 0.5});
      sharded_oracle.step(sharded_expected, {0.5, -0.25, 1, 2, -1, 0.125, 3});
    }
    check_close(dense.tensor(), dense_expected, ts::kFloat64, "dense");
    check_close(sharded.dtensor().full_tensor().reconcile(), sharded_expected, ts::kFloat64, "sharded");
  }
}

TEST_CASE("a braced list of parameters, Tensors or DTensors picks its constructor") {
  ts::Tensor w = make({1.0, 2.0}, ts::kFloat32);
  const ts::nn::Parameter p(make({3.0}, ts::kFloat32));
  // Tensors, parameters, and a mix (a Tensor converts to a parameter).
  CHECK(ts::optim::SGD({w}).params().size() == 1);
  CHECK(ts::optim::SGD({p}).params().size() == 1);
  const ts::optim::AdamW mixed({ts::nn::Parameter(w), p});
  REQUIRE(mixed.params().size() == 2);
  CHECK(mixed.params()[0].impl() == w.impl());
  CHECK(mixed.params()[1].impl() == p.tensor().impl());
}

TEST_CASE("a parameter list's errors name the parameter") {
  const ts::nn::Parameter a(make({1.0}, ts::kFloat32));
  CHECK_THROWS_WITH_AS(ts::optim::SGD(std::vector<ts::nn::Parameter>{a, ts::nn::Parameter()}),
                       "SGD: parameter 1 is an undefined nn::Parameter (default-constructed, no value); pass "
                       "parameters that hold a Tensor or a DTensor",
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::optim::AdamW(std::vector<ts::nn::Parameter>{}),
                       doctest::Contains("AdamW: optimizer got an empty parameter list"), ts::Error);
  // Two handles of one slot are one parameter listed twice.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization): a second handle
  const ts::nn::Parameter same_slot = a;
  CHECK_THROWS_WITH_AS(ts::optim::SGD(std::vector<ts::nn::Parameter>{a, same_slot}),
                       doctest::Contains("SGD: parameter 1 is the same tensor as parameter 0"), ts::Error);

  ts::Tensor leaf = make({1.0, 2.0}, ts::kFloat32);
  leaf.set_requires_grad(true);
  const ts::nn::Parameter computed(leaf * 2);
  CHECK_THROWS_WITH_AS(
      ts::optim::AdamW(std::vector<ts::nn::Parameter>{a, computed}),
      doctest::Contains("AdamW: can't optimize a non-leaf tensor: parameter 1 was computed by"), ts::Error);

  ts::LocalMode mode(2);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::Tensor local_value;
  {
    auto plain = mode.disable();
    local_value = make({1.0, 2.0}, ts::kFloat32);
  }
  const ts::nn::Parameter partial(ts::from_local(local_value, mesh, {ts::Partial()}));
  CHECK_THROWS_WITH_AS(
      ts::optim::SGD(std::vector<ts::nn::Parameter>{a, partial}),
      doctest::Contains("SGD: parameter 1 is placed P(sum): a pending reduction cannot be optimized"),
      ts::Error);
}

TEST_CASE("the optimizer keeps the value a parameter's slot held when it was built") {
  const ts::nn::Parameter p(make({1.0, 2.0}, ts::kFloat64));
  // The tensor the slot holds now (a copy of the handle: the slot may be given another).
  const ts::Tensor original = p.tensor();  // NOLINT(performance-unnecessary-copy-initialization)
  ts::optim::SGD opt(std::vector<ts::nn::Parameter>{p}, {.lr = 1.0});
  // A new value in the slot (what a parallel style does) is not what the optimizer updates.
  p.set(make({10.0, 20.0}, ts::kFloat64));
  ts::Tensor(original).set_grad(make({0.5, 0.5}, ts::kFloat64));
  opt.step();
  CHECK(original.to_vector<double>() == Values{0.5, 1.5});
  CHECK(p.tensor().to_vector<double>() == Values{10.0, 20.0});
}

TEST_CASE("set_lr changes the lr the next step uses, and options().lr with it") {
  ts::Tensor w = make({1.0, -2.0}, ts::kFloat64);
  ts::optim::SGD sgd({w}, {.lr = 0.1});
  CHECK(sgd.lr() == 0.1);
  CHECK(sgd.initial_lr() == 0.1);
  w.set_grad(make({1.0, 1.0}, ts::kFloat64));
  sgd.step();  // 1 - 0.1, -2 - 0.1
  CHECK(w.to_vector<double>() == Values{0.9, -2.1});
  sgd.set_lr(0.5);
  CHECK(sgd.lr() == 0.5);
  CHECK(sgd.options().lr == 0.5);
  sgd.step();  // 0.9 - 0.5, -2.1 - 0.5
  check_close(w, {0.4, -2.6}, ts::kFloat64);
  // No scheduler was attached: initial_lr follows the current lr.
  CHECK(sgd.initial_lr() == 0.5);

  // AdamW: with a zero gradient only the decay acts, p *= 1 - lr * wd.
  ts::Tensor v = make({2.0}, ts::kFloat64);
  ts::optim::AdamW adamw({v}, {.lr = 0.1, .weight_decay = 0.5});
  v.set_grad(make({0.0}, ts::kFloat64));
  adamw.set_lr(0.2);
  CHECK(adamw.options().lr == 0.2);
  adamw.step();  // 2 * (1 - 0.2 * 0.5)
  check_close(v, {1.8}, ts::kFloat64);

  CHECK_THROWS_WITH_AS(sgd.set_lr(-0.01), "SGD: invalid lr value -0.01; expected lr >= 0", ts::Error);
  CHECK_THROWS_WITH_AS(adamw.set_lr(std::nan("")), "AdamW: invalid lr value nan; expected lr >= 0",
                       ts::Error);
  // A refused value leaves the lr as it was.
  CHECK(sgd.lr() == 0.5);
  CHECK(adamw.lr() == 0.2);
  sgd.set_lr(0.0);
  CHECK(sgd.lr() == 0.0);
}
