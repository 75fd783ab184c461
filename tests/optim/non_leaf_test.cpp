// A non-leaf tensor (an op's output) given to an optimizer: refused at construction, naming the
// parameter, as PyTorch does. Accepting it would train nothing: the step writes into the temporary.
#include "reference.hpp"

namespace ts = tessera;
using optim_test::make;
using optim_test::make_local;

TEST_CASE("an optimizer refuses a non-leaf tensor and names its position") {
  ts::Tensor w = make({1.0, -2.0, 3.0}, ts::kFloat32);
  w.set_requires_grad(true);
  ts::Tensor b = make({0.5}, ts::kFloat32);
  b.set_requires_grad(true);
  const ts::Tensor doubled = w * 2;
  REQUIRE_FALSE(doubled.is_leaf());

  CHECK_THROWS_WITH_AS(
      ts::optim::SGD({doubled}, {.lr = 0.1}),
      doctest::Contains("SGD: can't optimize a non-leaf tensor: parameter 0 was computed by"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::optim::AdamW({b, doubled}),
                       doctest::Contains("AdamW: can't optimize a non-leaf tensor: parameter 1"), ts::Error);
  // The message says what to pass instead.
  CHECK_THROWS_WITH_AS(ts::optim::SGD({b, w, w + b}), doctest::Contains("parameter 2 was computed by"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::optim::SGD({doubled}), doctest::Contains("pass the leaf tensor"), ts::Error);

  // Leaves are accepted: those that require grad, those that do not, and a detached copy made a leaf.
  CHECK_NOTHROW(ts::optim::SGD({w, b}));
  CHECK_NOTHROW(ts::optim::SGD({make({4.0}, ts::kFloat64)}));
  ts::Tensor fresh = doubled.detach();
  fresh.set_requires_grad(true);
  CHECK_NOTHROW(ts::optim::AdamW({fresh}));
}

TEST_CASE("a non-leaf local tensor is refused too") {
  ts::Tensor l = make_local({{1.0, 2.0}, {3.0}, {4.0, 5.0, 6.0}}, ts::kFloat64);
  l.set_requires_grad(true);
  const ts::Tensor shifted = l + 1.0;
  REQUIRE_FALSE(shifted.is_leaf());
  CHECK_THROWS_WITH_AS(ts::optim::SGD({l, shifted}),
                       doctest::Contains("SGD: can't optimize a non-leaf tensor: parameter 1"), ts::Error);
  CHECK_NOTHROW(ts::optim::SGD({l}));
}

TEST_CASE("a non-leaf DTensor is refused, and the leaf it came from still trains") {
  ts::LocalMode mode(3);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::Tensor x;
  {
    auto plain = mode.disable();
    x = ts::from_values<double>({1, 2, 3, 4, 5, 6, 7}, {7}, ts::kFloat64);
  }
  ts::DTensor w = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  w.set_requires_grad(true);
  const ts::DTensor scaled = w * 2.0;
  REQUIRE_FALSE(scaled.is_leaf());
  CHECK_THROWS_WITH_AS(ts::optim::SGD(std::vector<ts::DTensor>{w, scaled}),
                       doctest::Contains("SGD: can't optimize a non-leaf tensor: parameter 1"), ts::Error);

  // The leaf trains: loss = sum(2 w) gives gradient 2 everywhere, so one step of lr 0.25 takes
  // 0.5 off every element.
  ts::optim::SGD opt(std::vector<ts::DTensor>{w}, {.lr = 0.25});
  scaled.sum().backward();
  opt.step();
  ts::Tensor expected;
  {
    auto plain = mode.disable();
    expected = ts::from_values<double>({0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5}, {7}, ts::kFloat64);
  }
  CHECK(ts::equal(w.full_tensor().reconcile(), expected));
}
