// Gradient checks of sum, mean, prod, max and min: every dim, given dims, keepdim, negative dims,
// 0-d and empty inputs; prod with zeros; max/min with ties (hand-written, PyTorch's even split).
#include "gradcheck.hpp"

namespace ts = tessera;
using gc::gradcheck;
using gc::rand_in;
using T = std::vector<ts::Tensor>;

namespace {

using Reduce = ts::Tensor (*)(const ts::Tensor&, const std::vector<int64_t>&, bool);

struct Named {
  const char* name;
  Reduce op;
};

const Named kReductions[] = {
    {"sum", ts::sum}, {"mean", ts::mean}, {"prod", ts::prod}, {"max", ts::max}, {"min", ts::min}};

struct DimsCase {
  std::vector<int64_t> dims;
  bool keepdim;
};

const std::vector<DimsCase> kDims = {
    {{}, false},  {{}, true},    {{0}, false},    {{1}, true},     {{2}, false},
    {{-1}, true}, {{-2}, false}, {{0, 2}, false}, {{0, -1}, true}, {{2, 0, 1}, false},
};

std::string describe(const char* op, const DimsCase& c) {
  std::string s = std::string(op) + " dims {";
  for (size_t i = 0; i < c.dims.size(); ++i) s += (i ? "," : "") + std::to_string(c.dims[i]);
  return s + "} keepdim " + (c.keepdim ? "true" : "false");
}

}  // namespace

TEST_CASE("sum, mean, prod, max, min over every dims combination, keepdim or not") {
  // Distinct values (no ties) away from zero so prod's gradient is the product of the others.
  const T in = {gc::rand_nz({2, 3, 4}, 30)};
  for (const Named& r : kReductions)
    for (const DimsCase& c : kDims) {
      const Reduce op = r.op;
      const DimsCase dc = c;
      gradcheck(describe(r.name, c), in, [op, dc](const T& x) { return op(x[0], dc.dims, dc.keepdim); });
    }
}

TEST_CASE("reductions of a non-contiguous input") {
  const T in = {gc::rand_nz({3, 4}, 31)};
  for (const Named& r : kReductions) {
    const Reduce op = r.op;
    gradcheck(std::string(r.name) + " of x^T over dim 1", in,
              [op](const T& x) { return op(x[0].t(), {1}, false); });
    gradcheck(std::string(r.name) + " of x[:, ::2]", in,
              [op](const T& x) { return op(x[0].slice(1, 0, 4, 2), {0}, true); });
  }
}

TEST_CASE("the method spellings") {
  const T in = {gc::rand_nz({2, 3}, 32)};
  gradcheck("x.sum()", in, [](const T& x) { return x[0].sum(); });
  gradcheck("x.sum({1}, true)", in, [](const T& x) { return x[0].sum({1}, true); });
  gradcheck("x.mean()", in, [](const T& x) { return x[0].mean(); });
  gradcheck("x.mean({0})", in, [](const T& x) { return x[0].mean({0}); });
  gradcheck("x.max()", in, [](const T& x) { return x[0].max(); });
  gradcheck("x.min()", in, [](const T& x) { return x[0].min(); });
}

TEST_CASE("reductions of a 0-d input") {
  const T in = {gc::dense({-1.75}, {})};
  for (const Named& r : kReductions) {
    const Reduce op = r.op;
    gradcheck(std::string(r.name) + " of 0-d", in, [op](const T& x) { return op(x[0], {}, false); });
    gradcheck(std::string(r.name) + " of 0-d keepdim", in, [op](const T& x) { return op(x[0], {}, true); });
    gradcheck(std::string(r.name) + " of 0-d dim 0", in, [op](const T& x) { return op(x[0], {0}, false); });
    gradcheck(std::string(r.name) + " of 0-d dim -1", in, [op](const T& x) { return op(x[0], {-1}, true); });
  }
}

TEST_CASE("reductions in a chain: softmax-like normalisation") {
  const T in = {rand_in({3, 4}, 33)};
  gradcheck("x / sum(x^2, 1)", in, [](const T& x) { return x[0] / ts::sum(x[0] * x[0], {1}, true); });
  gradcheck("x - mean(x, 0)", in, [](const T& x) { return x[0] - ts::mean(x[0], {0}); });
  gradcheck("x - max(x, -1)", in, [](const T& x) { return x[0] - ts::max(x[0], {-1}, true); });
}

TEST_CASE("prod with one zero and with two zeros in a slice") {
  // prod is linear in each element, so finite differences hold at zeros too.
  // Row 0: one zero; row 1: two zeros; row 2: none.
  const T in = {gc::dense({1.5, 0, -2, 3, 0, 0.5, 0, 2, 1.25, -0.5, 2, 3}, {3, 4})};
  gradcheck("prod over dim 1 with zeros", in, [](const T& x) { return ts::prod(x[0], {1}); });
  gradcheck("prod over all with zeros", in, [](const T& x) { return ts::prod(x[0]); });
  gradcheck("prod over dim 0 with zeros", in, [](const T& x) { return ts::prod(x[0], {0}, true); });
  // And by hand: d prod / d x_i = product of the others.
  const ts::Tensor x =
      gc::dense({1.5, 0, -2, 3, 0, 0.5, 0, 2, 1.25, -0.5, 2, 3}, {3, 4}).set_requires_grad(true);
  const ts::Tensor w = gc::dense({2, 3, 5}, {3});
  const ts::Tensor g = ts::autograd::grad({ts::sum(ts::prod(x, {1}) * w)}, {x})[0];
  gc::check_grad(g, {3, 4},
                 {0, 2 * (1.5 * -2 * 3), 0, 0, 0, 0, 0, 0, 5 * (-0.5 * 2 * 3), 5 * (1.25 * 2 * 3),
                  5 * (1.25 * -0.5 * 3), 5 * (1.25 * -0.5 * 2)},
                 "prod by hand");
  const ts::Tensor one_zero = gc::dense({4, 0.5, 0, 3}, {4}).set_requires_grad(true);
  gc::check_grad(ts::autograd::grad({ts::prod(one_zero)}, {one_zero})[0], {4}, {0, 0, 6, 0},
                 "one zero, whole");
  const ts::Tensor two_zeros = gc::dense({0, 0.5, 0, 3}, {4}).set_requires_grad(true);
  gc::check_grad(ts::autograd::grad({ts::prod(two_zeros)}, {two_zeros})[0], {4}, {0, 0, 0, 0},
                 "two zeros, whole");
}

TEST_CASE("max and min with ties share the gradient evenly") {
  // Row 0: max 5 twice, min 1 once; row 1: max 2 three times (every element), also the min;
  // row 2: max 4 once, min -1 twice.
  const ts::Tensor x = gc::dense({5, 1, 5, 2, 2, 2, -1, 4, -1}, {3, 3}).set_requires_grad(true);
  const ts::Tensor w = gc::dense({6, 12, 30}, {3});
  gc::check_grad(ts::autograd::grad({ts::sum(ts::max(x, {1}) * w)}, {x})[0], {3, 3},
                 {3, 0, 3, 4, 4, 4, 0, 30, 0}, "max over dim 1");
  gc::check_grad(ts::autograd::grad({ts::sum(ts::min(x, {-1}, true) * w.unsqueeze(1))}, {x})[0], {3, 3},
                 {0, 6, 0, 4, 4, 4, 15, 0, 15}, "min over dim -1 keepdim");
  // Over dim 0: column 0 = {5, 2, -1}, column 1 = {1, 2, 4}, column 2 = {5, 2, -1}: no ties.
  // Over everything: max 5 twice, min -1 twice.
  gc::check_grad(ts::autograd::grad({ts::max(x) * 3.0}, {x})[0], {3, 3}, {1.5, 0, 1.5, 0, 0, 0, 0, 0, 0},
                 "max all");
  gc::check_grad(ts::autograd::grad({ts::min(x, {}, true).sum() * 3.0}, {x})[0], {3, 3},
                 {0, 0, 0, 0, 0, 0, 1.5, 0, 1.5}, "min all keepdim");
  gc::check_grad(ts::autograd::grad({ts::max(x, {0, 1})}, {x})[0], {3, 3}, {0.5, 0, 0.5, 0, 0, 0, 0, 0, 0},
                 "max over both dims");
  // Four equal elements.
  const ts::Tensor flat = gc::dense({7, 7, 7, 7}, {2, 2}).set_requires_grad(true);
  gc::check_grad(ts::autograd::grad({ts::max(flat)}, {flat})[0], {2, 2}, {0.25, 0.25, 0.25, 0.25},
                 "all equal");
}

TEST_CASE("reductions of empty inputs give an empty gradient of the input's shape") {
  const T in = {gc::dense({}, {0, 3})};
  gradcheck("sum of [0,3]", in, [](const T& x) { return ts::sum(x[0]); });
  gradcheck("sum of [0,3] over dim 0", in, [](const T& x) { return ts::sum(x[0], {0}); });
  gradcheck("sum of [0,3] over dim 1", in, [](const T& x) { return ts::sum(x[0], {1}, true); });
  gradcheck("prod of [0,3] over dim 0", in, [](const T& x) { return ts::prod(x[0], {0}); });
  const ts::Tensor x = gc::dense({}, {0, 3}).set_requires_grad(true);
  const ts::Tensor g = ts::autograd::grad({ts::sum(x)}, {x})[0];
  CHECK(g.sizes() == ts::Shape{0, 3});
  CHECK(g.dtype() == ts::kFloat64);
}
