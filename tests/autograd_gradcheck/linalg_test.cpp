// Gradient checks of matmul (every case of torch.matmul's rules), mm, bmm, softmax and log_softmax.
#include "gradcheck.hpp"

namespace ts = tessera;
using gc::gradcheck;
using gc::rand_in;
using T = std::vector<ts::Tensor>;

namespace {

struct MatmulCase {
  ts::Shape a, b;
};

}  // namespace

TEST_CASE("matmul in every case of the rules") {
  const std::vector<MatmulCase> cases = {
      {{4}, {4}},                 // dot
      {{4}, {4, 3}},              // vector x matrix
      {{3, 4}, {4}},              // matrix x vector
      {{3, 4}, {4, 2}},           // mm
      {{2, 3, 4}, {2, 4, 5}},     // batched, same batch
      {{2, 1, 3, 4}, {5, 4, 2}},  // batch broadcast both ways and a leading dim
      {{2, 3, 4}, {4}},           // 3-d x 1-d
      {{4}, {2, 4, 3}},           // 1-d x 3-d
      {{2, 3, 4}, {4, 5}},        // batched x matrix (b broadcast)
      {{3, 4}, {2, 4, 5}},        // matrix x batched (a broadcast)
      {{1, 3, 4}, {2, 4, 2}},     // size-1 batch dim
      {{1, 4}, {4, 1}},           // 1x1 result
  };
  for (const MatmulCase& c : cases) {
    const std::string name = "matmul " + gc::shape_string(c.a) + " x " + gc::shape_string(c.b);
    const T in = {rand_in(c.a, 40), rand_in(c.b, 41)};
    gradcheck(name, in, [](const T& x) { return ts::matmul(x[0], x[1]); });
    gradcheck(name + " (method)", in, [](const T& x) { return x[0].matmul(x[1]); });
  }
}

TEST_CASE("matmul with only one operand requiring grad") {
  // The other operand is a constant captured by the function, not an input.
  const ts::Tensor b = rand_in({2, 4, 3}, 42);
  gradcheck("matmul(x, const)", {rand_in({2, 1, 5, 4}, 43)}, [b](const T& x) { return ts::matmul(x[0], b); });
  const ts::Tensor a = rand_in({3, 4}, 44);
  gradcheck("matmul(const, x)", {rand_in({4}, 45)}, [a](const T& x) { return ts::matmul(a, x[0]); });
}

TEST_CASE("matmul of transposed and the same operand twice") {
  gradcheck("x^T x", {rand_in({3, 4}, 46)}, [](const T& x) { return ts::matmul(x[0].t(), x[0]); });
  gradcheck("x x (square)", {rand_in({3, 3}, 47)}, [](const T& x) { return ts::matmul(x[0], x[0]); });
  gradcheck("matmul of transposes", {rand_in({3, 4}, 48), rand_in({2, 4, 5}, 49)},
            [](const T& x) { return ts::matmul(x[1].transpose(-1, -2), x[0].t()); });
}

TEST_CASE("mm and bmm") {
  gradcheck("mm", {rand_in({3, 4}, 50), rand_in({4, 2}, 51)}, [](const T& x) { return ts::mm(x[0], x[1]); });
  gradcheck("mm 1x1", {rand_in({1, 1}, 52), rand_in({1, 1}, 53)},
            [](const T& x) { return ts::mm(x[0], x[1]); });
  gradcheck("bmm", {rand_in({2, 3, 4}, 54), rand_in({2, 4, 5}, 55)},
            [](const T& x) { return ts::bmm(x[0], x[1]); });
  gradcheck("bmm batch 1", {rand_in({1, 2, 3}, 56), rand_in({1, 3, 2}, 57)},
            [](const T& x) { return ts::bmm(x[0], x[1]); });
}

TEST_CASE("matmul with an empty dim gives zero/empty gradients of the operands' shapes") {
  // [0,3] x [3,2]: the output is empty, so x's gradient is [0,3] and W's is zeros [3,2].
  gradcheck("matmul [0,3] x [3,2]", {gc::dense({}, {0, 3}), rand_in({3, 2}, 58)},
            [](const T& x) { return ts::matmul(x[0], x[1]); });
  // [2,0] x [0,3]: the output is zeros [2,3] whose gradient reaches empty operands.
  gradcheck("matmul [2,0] x [0,3]", {gc::dense({}, {2, 0}), gc::dense({}, {0, 3})},
            [](const T& x) { return ts::matmul(x[0], x[1]) + 1.0; });
  const ts::Tensor x = gc::dense({}, {0, 3}).set_requires_grad(true);
  const ts::Tensor w = rand_in({3, 2}, 59).set_requires_grad(true);
  const auto g = ts::autograd::grad({ts::sum(ts::matmul(x, w))}, {x, w});
  CHECK(g[0].sizes() == ts::Shape{0, 3});
  gc::check_grad(g[1], {3, 2}, {0, 0, 0, 0, 0, 0}, "W of an empty batch");
}

TEST_CASE("softmax and log_softmax on dims 0, 1 and -1") {
  const T in2 = {rand_in({3, 4}, 60, -3, 3)};
  const T in3 = {rand_in({2, 3, 4}, 61, -3, 3)};
  for (int64_t dim : {0, 1, -1}) {
    const std::string d = " dim " + std::to_string(dim);
    gradcheck("softmax [3,4]" + d, in2, [dim](const T& x) { return ts::softmax(x[0], dim); });
    gradcheck("log_softmax [3,4]" + d, in2, [dim](const T& x) { return ts::log_softmax(x[0], dim); });
    gradcheck("softmax [2,3,4]" + d, in3, [dim](const T& x) { return ts::softmax(x[0], dim); });
    gradcheck("log_softmax [2,3,4]" + d, in3, [dim](const T& x) { return ts::log_softmax(x[0], dim); });
    gradcheck("x.softmax() [3,4]" + d, in2, [dim](const T& x) { return x[0].softmax(dim); });
  }
  gradcheck("softmax [2,3,4] dim -2", in3, [](const T& x) { return ts::softmax(x[0], -2); });
  gradcheck("log_softmax of 1-d", {rand_in({5}, 62)}, [](const T& x) { return ts::log_softmax(x[0], 0); });
  gradcheck("softmax of a transposed input", in2, [](const T& x) { return ts::softmax(x[0].t(), 1); });
  gradcheck("softmax then log", in2, [](const T& x) { return ts::log(ts::softmax(x[0], 1)); });
}

TEST_CASE("matmul: more batch broadcasting and vectors against batches") {
  const std::vector<MatmulCase> cases = {
      {{2, 1, 3, 4}, {1, 5, 4, 2}}, {{4}, {2, 3, 4, 5}},    {{2, 1, 3, 4}, {4}},
      {{3, 1, 2, 4}, {3, 4, 1}},    {{1, 1, 2, 3}, {3, 2}},
  };
  for (const MatmulCase& c : cases)
    gradcheck("matmul " + gc::shape_string(c.a) + " x " + gc::shape_string(c.b),
              {rand_in(c.a, 63), rand_in(c.b, 64)}, [](const T& x) { return ts::matmul(x[0], x[1]); });
}

TEST_CASE("matmul gradients of large operands (threaded kernels) against plain loops") {
  // loss = sum((x W) * C): dx = C W^T, dW = x^T C. Big enough for the backend to split the work.
  const int64_t m = 160, k = 170, n = 160;
  const gc::Values xv = gc::uniform(m * k, 65, -1, 1), wv = gc::uniform(k * n, 66, -1, 1),
                   cv = gc::uniform(m * n, 67, -1, 1);
  const ts::Tensor x = gc::dense(xv, {m, k}).set_requires_grad(true);
  const ts::Tensor w = gc::dense(wv, {k, n}).set_requires_grad(true);
  const auto g = ts::autograd::grad({ts::sum(ts::matmul(x, w) * gc::dense(cv, {m, n}))}, {x, w});
  gc::Values dx(static_cast<size_t>(m * k), 0.0), dw(static_cast<size_t>(k * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double c = cv[static_cast<size_t>(i * n + j)];
      for (int64_t l = 0; l < k; ++l) {
        dx[static_cast<size_t>(i * k + l)] += c * wv[static_cast<size_t>(l * n + j)];
        dw[static_cast<size_t>(l * n + j)] += c * xv[static_cast<size_t>(i * k + l)];
      }
    }
  gc::check_grad(g[0], {m, k}, dx, "dx", 1e-9);
  gc::check_grad(g[1], {k, n}, dw, "dW", 1e-9);
}
