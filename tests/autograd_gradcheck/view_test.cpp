// Gradient checks of the views and shape ops of Tensor, contiguous/clone and casts.
#include "gradcheck.hpp"

namespace ts = tessera;
using gc::gradcheck;
using gc::rand_in;
using T = std::vector<ts::Tensor>;

TEST_CASE("view, reshape, flatten") {
  const T in = {rand_in({2, 3, 4}, 70)};
  gradcheck("view [6,4]", in, [](const T& x) { return x[0].view({6, 4}); });
  gradcheck("view [4,-1]", in, [](const T& x) { return x[0].view({4, -1}); });
  gradcheck("view [24]", in, [](const T& x) { return x[0].view({24}); });
  gradcheck("reshape [3,8]", in, [](const T& x) { return x[0].reshape({3, 8}); });
  gradcheck("reshape of a transpose (a copy)", in, [](const T& x) {
    return x[0].transpose(0, 2).reshape({-1, 6});
  });
  gradcheck("flatten", in, [](const T& x) { return x[0].flatten(); });
  gradcheck("flatten(1)", in, [](const T& x) { return x[0].flatten(1); });
  gradcheck("flatten(0, 1)", in, [](const T& x) { return x[0].flatten(0, 1); });
  // A view that feeds a non-linear op: the gradient must land on the right elements.
  gradcheck("exp(view) * view", in, [](const T& x) {
    return ts::exp(x[0].view({4, 6})) * x[0].reshape({4, 6});
  });
  gradcheck("reshape of a 0-d", {gc::dense({0.75}, {})}, [](const T& x) {
    return x[0].reshape({1, 1}) * 2.0;
  });
}

TEST_CASE("transpose, t, permute") {
  const T in = {rand_in({2, 3, 4}, 71)};
  gradcheck("transpose(0, 2)", in, [](const T& x) { return x[0].transpose(0, 2); });
  gradcheck("transpose(-1, 1)", in, [](const T& x) { return x[0].transpose(-1, 1); });
  gradcheck("transpose(1, 1)", in, [](const T& x) { return x[0].transpose(1, 1); });
  gradcheck("t of 2-d", {rand_in({3, 5}, 72)}, [](const T& x) { return x[0].t(); });
  gradcheck("t of 1-d", {rand_in({5}, 73)}, [](const T& x) { return x[0].t(); });
  gradcheck("permute {2,0,1}", in, [](const T& x) { return x[0].permute({2, 0, 1}); });
  gradcheck("permute {1,2,0}", in, [](const T& x) { return x[0].permute({1, 2, 0}); });
  gradcheck("permute {-1,-3,-2}", in, [](const T& x) { return x[0].permute({-1, -3, -2}); });
  gradcheck("permute then sigmoid", in, [](const T& x) { return ts::sigmoid(x[0].permute({1, 2, 0})); });
}

TEST_CASE("squeeze and unsqueeze") {
  const T in = {rand_in({1, 3, 1, 2}, 74)};
  gradcheck("squeeze()", in, [](const T& x) { return x[0].squeeze(); });
  gradcheck("squeeze(0)", in, [](const T& x) { return x[0].squeeze(0); });
  gradcheck("squeeze(-2)", in, [](const T& x) { return x[0].squeeze(-2); });
  gradcheck("squeeze(1) (size 3: no-op)", in, [](const T& x) { return x[0].squeeze(1); });
  gradcheck("unsqueeze(0)", in, [](const T& x) { return x[0].unsqueeze(0); });
  gradcheck("unsqueeze(4)", in, [](const T& x) { return x[0].unsqueeze(4); });
  gradcheck("unsqueeze(-1)", in, [](const T& x) { return x[0].unsqueeze(-1); });
  gradcheck("unsqueeze(-3)", in, [](const T& x) { return x[0].unsqueeze(-3); });
  gradcheck("unsqueeze of a 0-d", {gc::dense({1.25}, {})}, [](const T& x) { return x[0].unsqueeze(0); });
}

TEST_CASE("narrow, slice with steps, select, operator[]") {
  const T in = {rand_in({4, 6}, 75)};
  gradcheck("narrow(0, 1, 2)", in, [](const T& x) { return x[0].narrow(0, 1, 2); });
  gradcheck("narrow(-1, 2, 4)", in, [](const T& x) { return x[0].narrow(-1, 2, 4); });
  gradcheck("narrow(1, 0, 0)", in, [](const T& x) { return x[0].narrow(1, 0, 0); });
  gradcheck("slice(1, 1, 6, 2)", in, [](const T& x) { return x[0].slice(1, 1, 6, 2); });
  gradcheck("slice(1, 0, 6, 3)", in, [](const T& x) { return x[0].slice(1, 0, 6, 3); });
  gradcheck("slice(0, 1, 3)", in, [](const T& x) { return x[0].slice(0, 1, 3); });
  gradcheck("slice(0, 0, 4, 5)", in, [](const T& x) { return x[0].slice(0, 0, 4, 5); });
  gradcheck("slice of a slice", in, [](const T& x) { return x[0].slice(1, 1, 6, 2).slice(0, 1, 4, 2); });
  gradcheck("select(0, 2)", in, [](const T& x) { return x[0].select(0, 2); });
  gradcheck("select(1, -1)", in, [](const T& x) { return x[0].select(1, -1); });
  gradcheck("x[1]", in, [](const T& x) { return x[0][1]; });
  gradcheck("x[3][5] (0-d)", in, [](const T& x) { return x[0][3][5]; });
  // Overlapping parts of one input: the gradients add.
  gradcheck("narrow + narrow overlapping", in,
            [](const T& x) { return x[0].narrow(1, 0, 4) * x[0].narrow(1, 2, 4); });
  gradcheck("rows combined", in, [](const T& x) { return x[0][0] * 2.0 + x[0][2] * x[0][0]; });
}

TEST_CASE("flip and expand") {
  const T in = {rand_in({2, 3, 4}, 76)};
  gradcheck("flip {0}", in, [](const T& x) { return x[0].flip({0}); });
  gradcheck("flip {-1}", in, [](const T& x) { return x[0].flip({-1}); });
  gradcheck("flip {0, 2}", in, [](const T& x) { return x[0].flip({0, 2}); });
  gradcheck("flip then weighted by the original", in, [](const T& x) { return x[0].flip({1}) * x[0]; });
  gradcheck("expand [3,1] -> [2,3,4]", {rand_in({3, 1}, 77)}, [](const T& x) {
    return x[0].expand({2, 3, 4});
  });
  gradcheck("expand [3,1] -> [-1,5]", {rand_in({3, 1}, 78)}, [](const T& x) { return x[0].expand({-1, 5}); });
  gradcheck("expand [1,4] -> [3,4] then exp", {rand_in({1, 4}, 79)}, [](const T& x) {
    return ts::exp(x[0].expand({3, 4}));
  });
  gradcheck("expand of a 0-d", {gc::dense({-0.5}, {})}, [](const T& x) { return x[0].expand({2, 2}); });
  gradcheck("expand to the same shape", in, [](const T& x) { return x[0].expand({2, 3, 4}); });
}

TEST_CASE("contiguous and clone") {
  const T in = {rand_in({3, 4}, 80)};
  gradcheck("contiguous of contiguous", in, [](const T& x) { return x[0].contiguous() * 1.5; });
  gradcheck("contiguous of a transpose", in, [](const T& x) { return x[0].t().contiguous(); });
  gradcheck("contiguous of a step slice", in, [](const T& x) { return x[0].slice(1, 0, 4, 2).contiguous(); });
  gradcheck("clone", in, [](const T& x) { return x[0].clone(); });
  gradcheck("clone of a flip", in, [](const T& x) { return x[0].flip({1}).clone() * x[0]; });
}

TEST_CASE("casts: float64 -> float32 -> float64 and float32 inputs") {
  const T in = {rand_in({2, 3}, 81)};
  gradcheck("to(float64) of float64 (same tensor)", in,
            [](const T& x) { return x[0].to(ts::kFloat64) * 2.0; });
  gradcheck(
      "to(float32).to(float64)", in, [](const T& x) { return x[0].to(ts::kFloat32).to(ts::kFloat64); },
      gc::float32_options());
  gradcheck(
      "exp(x.to(float32)).to(float64)", in,
      [](const T& x) { return ts::exp(x[0].to(ts::kFloat32)).to(ts::kFloat64); }, gc::float32_options());
  gradcheck(
      "x.to(float32) * x (promotes back)", in, [](const T& x) { return x[0].to(ts::kFloat32) * x[0]; },
      gc::float32_options());
  // A float32 leaf: its gradient is float32.
  const ts::Tensor x32 = gc::dense({0.5, -1.25, 2}, {3}, ts::kFloat32);
  gradcheck(
      "float32 leaf through float64", {x32}, [](const T& x) { return ts::tanh(x[0].to(ts::kFloat64)); },
      gc::float32_options());
  const ts::Tensor leaf = x32.clone().set_requires_grad(true);
  const ts::Tensor g = ts::autograd::grad({ts::sum(leaf.to(ts::kFloat64) * 3.0)}, {leaf})[0];
  CHECK(g.dtype() == ts::kFloat32);
  gc::check_grad(g, {3}, {3, 3, 3}, "cast gradient");
  const ts::Tensor leaf64 = gc::dense({0.5, -1.25}, {2}).set_requires_grad(true);
  const ts::Tensor g64 = ts::autograd::grad({ts::sum(leaf64.to(ts::kFloat32) * 3.0f)}, {leaf64})[0];
  CHECK(g64.dtype() == ts::kFloat64);
  gc::check_grad(g64, {2}, {3, 3}, "cast gradient (float64 leaf)");
}

TEST_CASE("the identity and non-contiguous leaves") {
  gradcheck("identity", {rand_in({2, 3}, 82)}, [](const T& x) { return x[0]; });
  // A leaf that is itself a transposed view (detached): its gradient has its logical shape.
  const ts::Tensor base = gc::dense({1, 2, 3, 4, 5, 6}, {2, 3});
  ts::Tensor x = base.t().detach();
  x.set_requires_grad(true);
  REQUIRE_FALSE(x.is_contiguous());
  const ts::Tensor w = gc::dense({10, 20, 30, 40, 50, 60}, {3, 2});
  gc::check_grad(ts::autograd::grad({ts::sum(x * w)}, {x})[0], {3, 2}, {10, 20, 30, 40, 50, 60}, "x^T leaf");
  gc::check_grad(ts::autograd::grad({ts::sum(x.narrow(0, 1, 2) * w.narrow(0, 0, 2))}, {x})[0], {3, 2},
                 {0, 0, 10, 20, 30, 40}, "narrow of the x^T leaf");
  gc::check_grad(ts::autograd::grad({ts::sum(ts::matmul(x.t(), w))}, {x})[0], {3, 2},
                 {30, 30, 70, 70, 110, 110}, "matmul of the x^T leaf (row sums of w)");
}
