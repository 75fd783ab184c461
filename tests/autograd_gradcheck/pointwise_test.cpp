// Gradient checks of the element-wise ops: binary (with broadcasting), with a scalar on either
// side, unary; and the points where finite differences are not valid (ties, kinks, zero powers),
// against hand-written PyTorch values.
#include <limits>

#include "gradcheck.hpp"

namespace ts = tessera;
using gc::gradcheck;
using gc::rand_in;
using gc::rand_nz;
using T = std::vector<ts::Tensor>;

namespace {

struct ShapePair {
  ts::Shape a, b;
};

// Same shapes, trailing broadcast, leading dims, size-1 dims on both sides, 0-d on either side.
const std::vector<ShapePair> kBroadcastShapes = {
    {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3}, {2, 2, 3}}, {{2, 1, 4}, {3, 1}},
    {{3, 1}, {1, 4}}, {{2, 3}, {}},  {{}, {2, 3}},     {{1, 3}, {2, 1, 1}},
};

std::string shapes_name(const char* op, const ShapePair& p) {
  return std::string(op) + " " + gc::shape_string(p.a) + " x " + gc::shape_string(p.b);
}

}  // namespace

TEST_CASE("add, sub, mul: tensor-tensor with broadcasting") {
  for (const ShapePair& p : kBroadcastShapes) {
    const T in = {rand_in(p.a, 1), rand_in(p.b, 2)};
    gradcheck(shapes_name("add", p), in, [](const T& x) { return ts::add(x[0], x[1]); });
    gradcheck(shapes_name("sub", p), in, [](const T& x) { return ts::sub(x[0], x[1]); });
    gradcheck(shapes_name("mul", p), in, [](const T& x) { return ts::mul(x[0], x[1]); });
    gradcheck(shapes_name("operator+-*", p), in, [](const T& x) { return (x[0] + x[1]) * x[1] - x[0]; });
  }
}

TEST_CASE("div, pow: tensor-tensor with broadcasting") {
  for (const ShapePair& p : kBroadcastShapes) {
    gradcheck(shapes_name("div", p), {rand_in(p.a, 3), rand_nz(p.b, 4)},
              [](const T& x) { return ts::div(x[0], x[1]); });
    // A positive base; exponents of both signs.
    gradcheck(shapes_name("pow", p), {rand_in(p.a, 5, 0.3, 2.5), rand_in(p.b, 6, -2, 2)},
              [](const T& x) { return ts::pow(x[0], x[1]); });
  }
}

TEST_CASE("maximum, minimum: tensor-tensor with broadcasting, no ties") {
  for (const ShapePair& p : kBroadcastShapes) {
    const T in = {rand_in(p.a, 7), rand_in(p.b, 8)};
    gradcheck(shapes_name("maximum", p), in, [](const T& x) { return ts::maximum(x[0], x[1]); });
    gradcheck(shapes_name("minimum", p), in, [](const T& x) { return ts::minimum(x[0], x[1]); });
  }
}

TEST_CASE("the same input on both sides of a binary op") {
  const T in = {rand_nz({2, 3}, 9)};
  gradcheck("x * x", in, [](const T& x) { return x[0] * x[0]; });
  gradcheck("x / x (gradient 0)", in, [](const T& x) { return x[0] / x[0]; });
  gradcheck("x - x * 2 + x", in, [](const T& x) { return x[0] - x[0] * 2.0 + x[0]; });
  gradcheck("pow(|x|, x)", in, [](const T& x) { return ts::pow(ts::abs(x[0]), x[0]); });
}

TEST_CASE("tensor-scalar and scalar-tensor") {
  const T any = {rand_in({2, 3}, 10)};
  const T nonzero = {rand_nz({2, 3}, 11)};
  const T positive = {rand_in({2, 3}, 12, 0.2, 3)};
  gradcheck("x + 2.5", any, [](const T& x) { return ts::add(x[0], 2.5); });
  gradcheck("2.5 + x", any, [](const T& x) { return ts::add(2.5, x[0]); });
  gradcheck("x - 2.5", any, [](const T& x) { return ts::sub(x[0], 2.5); });
  gradcheck("2.5 - x", any, [](const T& x) { return ts::sub(2.5, x[0]); });
  gradcheck("x * -1.5", any, [](const T& x) { return ts::mul(x[0], -1.5); });
  gradcheck("-1.5 * x", any, [](const T& x) { return ts::mul(-1.5, x[0]); });
  gradcheck("x * 3 (integer scalar)", any, [](const T& x) { return x[0] * 3; });
  gradcheck("x / -2.5", any, [](const T& x) { return ts::div(x[0], -2.5); });
  gradcheck("-2.5 / x", nonzero, [](const T& x) { return ts::div(-2.5, x[0]); });
  gradcheck("1 / x (integer scalar)", nonzero, [](const T& x) { return 1 / x[0]; });
  gradcheck("x ^ 3", any, [](const T& x) { return ts::pow(x[0], 3); });
  gradcheck("x ^ 2.0", any, [](const T& x) { return ts::pow(x[0], 2.0); });
  gradcheck("x ^ 1", any, [](const T& x) { return ts::pow(x[0], 1); });
  gradcheck("x ^ 0 (gradient 0)", any, [](const T& x) { return ts::pow(x[0], 0); });
  gradcheck("x ^ 0.5", positive, [](const T& x) { return ts::pow(x[0], 0.5); });
  gradcheck("x ^ -1.5", positive, [](const T& x) { return ts::pow(x[0], -1.5); });
  gradcheck("2.5 ^ x", any, [](const T& x) { return ts::pow(2.5, x[0]); });
  gradcheck("0.4 ^ x", any, [](const T& x) { return ts::pow(0.4, x[0]); });
  gradcheck("maximum(x, 0.3)", any, [](const T& x) { return ts::maximum(x[0], 0.3); });
  gradcheck("maximum(0.3, x)", any, [](const T& x) { return ts::maximum(0.3, x[0]); });
  gradcheck("minimum(x, 0.3)", any, [](const T& x) { return ts::minimum(x[0], 0.3); });
  gradcheck("minimum(0.3, x)", any, [](const T& x) { return ts::minimum(0.3, x[0]); });
}

TEST_CASE("unary ops") {
  for (const ts::Shape& shape : {ts::Shape{2, 3, 2}, ts::Shape{}, ts::Shape{5}}) {
    const std::string s = " " + gc::shape_string(shape);
    const T any = {rand_in(shape, 20, -3, 3)};
    const T nonzero = {rand_nz(shape, 21)};
    const T positive = {rand_in(shape, 22, 0.1, 4)};
    gradcheck("neg" + s, any, [](const T& x) { return ts::neg(x[0]); });
    gradcheck("operator-" + s, any, [](const T& x) { return -x[0]; });
    gradcheck("abs" + s, nonzero, [](const T& x) { return ts::abs(x[0]); });
    gradcheck("exp" + s, any, [](const T& x) { return ts::exp(x[0]); });
    gradcheck("log" + s, positive, [](const T& x) { return ts::log(x[0]); });
    gradcheck("sqrt" + s, positive, [](const T& x) { return ts::sqrt(x[0]); });
    gradcheck("relu" + s, nonzero, [](const T& x) { return ts::relu(x[0]); });
    gradcheck("gelu" + s, any, [](const T& x) { return ts::gelu(x[0]); });
    gradcheck("tanh" + s, any, [](const T& x) { return ts::tanh(x[0]); });
    gradcheck("sigmoid" + s, any, [](const T& x) { return ts::sigmoid(x[0]); });
  }
}

TEST_CASE("unary ops on a non-contiguous input and chained") {
  const T in = {rand_nz({3, 4}, 23)};
  gradcheck("exp(x^T)", in, [](const T& x) { return ts::exp(x[0].t()); });
  gradcheck("gelu(tanh(x)) * sigmoid(x)", in,
            [](const T& x) { return ts::gelu(ts::tanh(x[0])) * ts::sigmoid(x[0]); });
  gradcheck("log(sqrt(abs(x)) + 1)", in, [](const T& x) { return ts::log(ts::sqrt(ts::abs(x[0])) + 1); });
  gradcheck("relu(-x) * exp(x)", in, [](const T& x) { return ts::relu(-x[0]) * ts::exp(x[0]); });
}

// Finite differences are not valid below: the expected values are PyTorch's.

TEST_CASE("maximum and minimum with ties share the gradient in half") {
  const ts::Tensor a = gc::dense({1, 2, 3, -1}, {4}).set_requires_grad(true);
  const ts::Tensor b = gc::dense({1, 5, 3, -2}, {4}).set_requires_grad(true);
  const ts::Tensor w = gc::dense({0.5, 0.25, 2, 4}, {4});
  auto g = ts::autograd::grad({ts::sum(ts::maximum(a, b) * w)}, {a, b});
  gc::check_grad(g[0], {4}, {0.25, 0, 1, 4}, "maximum tie, a");
  gc::check_grad(g[1], {4}, {0.25, 0.25, 1, 0}, "maximum tie, b");
  g = ts::autograd::grad({ts::sum(ts::minimum(a, b) * w)}, {a, b});
  gc::check_grad(g[0], {4}, {0.25, 0.25, 1, 0}, "minimum tie, a");
  gc::check_grad(g[1], {4}, {0.25, 0, 1, 4}, "minimum tie, b");
}

TEST_CASE("maximum with a tie against a broadcast operand sums the halves") {
  // b (shape [1]) ties with a[0] and a[2]: b gets half of each, plus all of a[1]'s (b wins there).
  const ts::Tensor a = gc::dense({3, 1, 3, 4}, {4}).set_requires_grad(true);
  const ts::Tensor b = gc::dense({3}, {1}).set_requires_grad(true);
  const ts::Tensor w = gc::dense({1, 10, 100, 1000}, {4});
  const auto g = ts::autograd::grad({ts::sum(ts::maximum(a, b) * w)}, {a, b});
  gc::check_grad(g[0], {4}, {0.5, 0, 50, 1000}, "a");
  gc::check_grad(g[1], {1}, {0.5 + 10 + 50}, "b");
}

TEST_CASE("maximum and minimum with a scalar tie") {
  const ts::Tensor x = gc::dense({2, 1, 3}, {3}).set_requires_grad(true);
  const ts::Tensor w = gc::dense({4, 8, 16}, {3});
  gc::check_grad(ts::autograd::grad({ts::sum(ts::maximum(x, 2.0) * w)}, {x})[0], {3}, {2, 0, 16},
                 "maximum(x, 2)");
  gc::check_grad(ts::autograd::grad({ts::sum(ts::minimum(2.0, x) * w)}, {x})[0], {3}, {2, 8, 0},
                 "minimum(2, x)");
}

TEST_CASE("abs and relu at zero have gradient zero") {
  const ts::Tensor x = gc::dense({0, -2, 3}, {3}).set_requires_grad(true);
  const ts::Tensor w = gc::dense({5, 7, 11}, {3});
  gc::check_grad(ts::autograd::grad({ts::sum(ts::abs(x) * w)}, {x})[0], {3}, {0, -7, 11}, "abs");
  gc::check_grad(ts::autograd::grad({ts::sum(ts::relu(x) * w)}, {x})[0], {3}, {0, 0, 11}, "relu");
}

TEST_CASE("pow at zero base and zero exponent") {
  // d/da a^0 = 0 even at a = 0; d/da a^2 at 0 = 0; d/da a^1 = 1; d/db 0^b = 0 (PyTorch masks a == 0).
  const ts::Tensor a = gc::dense({0, 0, 0, 2}, {4}).set_requires_grad(true);
  const ts::Tensor b = gc::dense({0, 2, 1, 0}, {4}).set_requires_grad(true);
  const auto g = ts::autograd::grad({ts::sum(ts::pow(a, b))}, {a, b});
  gc::check_grad(g[0], {4}, {0, 0, 1, 0}, "d/da");
  gc::check_grad(g[1], {4}, {0, 0, 0, std::log(2.0)}, "d/db");
  const ts::Tensor z = gc::dense({0, 3}, {2}).set_requires_grad(true);
  gc::check_grad(ts::autograd::grad({ts::sum(ts::pow(z, 0))}, {z})[0], {2}, {0, 0}, "z^0");
  gc::check_grad(ts::autograd::grad({ts::sum(ts::pow(z, 2))}, {z})[0], {2}, {0, 6}, "z^2");
}

TEST_CASE("mixed dtypes: the gradient comes back in each input's own dtype") {
  // float32 with float64: the op runs in float64, the float32 input's gradient is float32.
  const ts::Tensor a32 = gc::dense(gc::uniform(6, 24, -2, 2), {2, 3}, ts::kFloat32);
  const ts::Tensor b64 = rand_in({3}, 25);
  gradcheck(
      "float32 * float64", {a32, b64}, [](const T& x) { return x[0] * x[1]; }, gc::float32_options());
  gradcheck(
      "float64 / float32", {gc::dense({1.5, -0.75, 2.25}, {3}, ts::kFloat32), b64},
      [](const T& x) { return x[1] / x[0]; }, gc::float32_options());
  // Integer operands do not require grad; the float input still gets its gradient.
  const ts::Tensor ints = ts::tensor({3, -2, 5});  // int64
  const T in = {rand_nz({2, 3}, 26)};
  gradcheck("x * int64", in, [ints](const T& x) { return x[0] * ints; });
  gradcheck("int64 / x", in, [ints](const T& x) { return ints / x[0]; });
  gradcheck("x - int64", in, [ints](const T& x) { return x[0] - ints; });
  gradcheck("pow(x, int64)", in, [ints](const T& x) { return ts::pow(x[0], ints); });
  gradcheck("pow(|x|, int64) * 1", in, [](const T& x) {
    return ts::pow(ts::abs(x[0]), ts::tensor({2, 3, 1}));
  });
  gradcheck("maximum(x, int64)", in, [ints](const T& x) { return ts::maximum(x[0], ints - 3); });
  gradcheck("minimum(int64, x)", in, [ints](const T& x) { return ts::minimum(ints - 3, x[0]); });
  gradcheck(
      "float32 x * int scalar", {a32}, [](const T& x) { return x[0] * 3; }, gc::float32_options());
}

TEST_CASE("pow with a zero scalar base: PyTorch's gradient is 0 where the exponent is >= 0") {
  // d/dx 0^x = 0^x log 0, which PyTorch (pow_backward_exponent) takes as 0 for x >= 0 (0^x is
  // constant 0 for x > 0 and the limit from the right at x = 0); for x < 0 it is inf * -inf = -inf.
  const ts::Tensor x = gc::dense({2, 0, 0.5, -1}, {4}).set_requires_grad(true);
  const double inf = std::numeric_limits<double>::infinity();
  gc::check_grad(ts::autograd::grad({ts::sum(ts::pow(0.0, x))}, {x})[0], {4}, {0, 0, 0, -inf},
                 "d/dx pow(0, x)");
}

TEST_CASE("pow with a zero tensor base and a negative exponent: PyTorch's gradients are infinite") {
  // a = 0, b = -1: d/da = b a^(b-1) = -inf; d/db = a^b log a = inf * -inf = -inf (PyTorch masks only
  // b >= 0).
  const ts::Tensor a = gc::dense({0}, {1}).set_requires_grad(true);
  const ts::Tensor b = gc::dense({-1}, {1}).set_requires_grad(true);
  const double inf = std::numeric_limits<double>::infinity();
  const auto g = ts::autograd::grad({ts::sum(ts::pow(a, b))}, {a, b});
  gc::check_grad(g[0], {1}, {-inf}, "d/da");
  gc::check_grad(g[1], {1}, {-inf}, "d/db");
}
