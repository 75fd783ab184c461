// Autograd semantics: what backward accumulates, what is recorded, and the
// errors. Expected gradients are worked out by hand in each case.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

std::vector<double> values(const ts::Tensor& t) { return t.to_vector<double>(); }

void check_near(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(got[i] == doctest::Approx(expected[i]).epsilon(1e-12), "index " << i);
}

ts::Tensor leaf(std::initializer_list<double> v, const ts::Shape& shape) {
  return ts::from_values(std::vector<double>(v), shape, ts::kFloat64).set_requires_grad(true);
}

}  // namespace

TEST_CASE("the first autograd example: sum(relu(x @ w)) gives w.grad = x^T (x @ w > 0)") {
  const ts::Tensor x = ts::from_values(std::vector<double>{1, -2, 3, 0.5, 4, -1}, {2, 3}, ts::kFloat64);
  ts::Tensor w = leaf({0.5, -1, 2, 0.25, -0.5, 1}, {3, 2});
  const ts::Tensor y = ts::matmul(x, w);
  CHECK(y.grad_fn_name() == "MmBackward");
  const ts::Tensor loss = ts::sum(ts::relu(y));
  CHECK(loss.grad_fn_name() == "SumBackward");
  loss.backward();
  // y = [[1*0.5-2*2+3*-0.5, 1*-1-2*0.25+3*1], [0.5*0.5+4*2-1*-0.5, 0.5*-1+4*0.25-1*1]]
  //   = [[-5, 1.5], [8.75, -0.5]] -> mask [[0, 1], [1, 0]]; w.grad[k][j] = sum_i x[i][k] mask[i][j].
  check_near(values(w.grad()), {0.5, 1, 4, -2, -1, 3});
  CHECK(w.is_leaf());
  CHECK(w.grad_fn_name().empty());
  CHECK_FALSE(y.is_leaf());
}

TEST_CASE("gradients accumulate across backward calls until zeroed") {
  ts::Tensor a = leaf({1, 2, 3}, {3});
  (ts::sum(a * a)).backward();    // 2a
  (ts::sum(a * 3.0)).backward();  // + 3
  check_near(values(a.grad()), {5, 7, 9});
  const ts::Tensor before = a.grad();
  a.zero_grad(false);
  check_near(values(a.grad()), {0, 0, 0});
  a.zero_grad();
  CHECK_FALSE(a.grad().defined());
  CHECK(before.defined());
}

TEST_CASE("a tensor used twice gets both contributions, a + a hands each leaf its own gradient tensor") {
  ts::Tensor a = leaf({1, 2}, {2});
  ts::Tensor b = leaf({3, 4}, {2});
  ts::sum(a + b + a * b).backward();
  check_near(values(a.grad()), {4, 5});  // 1 + b
  check_near(values(b.grad()), {2, 3});  // 1 + a
  {
    ts::NoGradGuard off;
    a.grad().fill_(0);  // one leaf's gradient is its own: the other is untouched
  }
  check_near(values(b.grad()), {2, 3});
}

TEST_CASE("NoGradGuard stops recording on this thread only, detach cuts the graph") {
  ts::Tensor a = leaf({1, 2}, {2});
  {
    ts::NoGradGuard off;
    CHECK_FALSE(ts::is_grad_enabled());
    const ts::Tensor y = a * 2.0;
    CHECK_FALSE(y.requires_grad());
    bool other_thread_records = false;
    std::thread([&] { other_thread_records = (a * 2.0).requires_grad(); }).join();
    CHECK(other_thread_records);
  }
  CHECK(ts::is_grad_enabled());
  const ts::Tensor d = (a * 2.0).detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.data_ptr() != nullptr);
  ts::sum(d * a).backward();  // d is a constant here
  check_near(values(a.grad()), {2, 4});
}

TEST_CASE("a second backward through a freed graph is an error, retain_graph keeps it") {
  ts::Tensor a = leaf({1, 2}, {2});
  const ts::Tensor loss = ts::sum(a * a);
  loss.backward(ts::Tensor(), /*retain_graph=*/true);
  loss.backward();
  check_near(values(a.grad()), {4, 8});
  CHECK_THROWS_WITH_AS(loss.backward(), doctest::Contains("a second time"), ts::Error);
}

TEST_CASE("backward of a non-scalar needs a gradient of its shape") {
  ts::Tensor a = leaf({1, 2, 3}, {3});
  const ts::Tensor y = a * a;
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("shape [3]"), ts::Error);
  CHECK_THROWS_WITH_AS(y.backward(ts::ones({2}, ts::kFloat64)), doctest::Contains("has shape [2]"),
                       ts::Error);
  y.backward(ts::from_values(std::vector<double>{1, 10, 100}, {3}, ts::kFloat64));
  check_near(values(a.grad()), {2, 40, 600});
}

TEST_CASE("a value saved for backward and modified in place since is refused (version counter)") {
  ts::Tensor a = leaf({1, 2}, {2});
  ts::Tensor b = ts::from_values(std::vector<double>{3, 4}, {2}, ts::kFloat64);
  const int64_t version = b.version();
  const ts::Tensor loss = ts::sum(a * b);  // saves b
  b.fill_(7);
  CHECK(b.version() > version);
  CHECK_THROWS_WITH_AS(loss.backward(), doctest::Contains("modified by an in-place operation"), ts::Error);
  // Writing to a view counts too: views share their base's version.
  ts::Tensor c = ts::from_values(std::vector<double>{3, 4}, {2}, ts::kFloat64);
  const ts::Tensor loss2 = ts::sum(ts::exp(a) * c);
  c.narrow(0, 1, 1).fill_(0);
  CHECK_THROWS_AS(loss2.backward(), ts::Error);
}

TEST_CASE("in-place writes to a tensor that requires grad are refused outside NoGradGuard") {
  ts::Tensor a = leaf({1, 2}, {2});
  CHECK_THROWS_WITH_AS(a.fill_(0), doctest::Contains("requires grad"), ts::Error);
  CHECK_THROWS_AS(a.copy_(ts::zeros({2}, ts::kFloat64)), ts::Error);
  {
    ts::NoGradGuard off;
    a.fill_(5);  // an optimizer step
  }
  check_near(values(a), {5, 5});
}

TEST_CASE("only floating-point leaves can require grad, non-leaves cannot be switched off") {
  ts::Tensor i = ts::arange(4);
  CHECK_THROWS_WITH_AS(i.set_requires_grad(true), doctest::Contains("int64"), ts::Error);
  ts::Tensor a = leaf({1, 2}, {2});
  ts::Tensor y = a * 2.0;
  CHECK_THROWS_WITH_AS(y.set_requires_grad(false), doctest::Contains("MulBackward"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::sum(ts::arange(3).to(ts::kFloat64)).backward(),
                       doctest::Contains("does not require grad"), ts::Error);
  // Comparisons give bool tensors without a graph.
  CHECK_FALSE(ts::gt(a, 1.0).requires_grad());
}

TEST_CASE("retain_grad keeps a non-leaf's gradient, autograd::grad returns without accumulating") {
  ts::Tensor a = leaf({1, 2}, {2});
  ts::Tensor y = a * 3.0;
  y.retain_grad();
  ts::sum(y * y).backward();
  check_near(values(y.grad()), {6, 12});   // 2y
  check_near(values(a.grad()), {18, 36});  // 2y * 3

  ts::Tensor b = leaf({2, 5}, {2});
  const ts::Tensor out = ts::sum(b * b * b);
  const std::vector<ts::Tensor> g = ts::autograd::grad({out}, {b});
  check_near(values(g[0]), {12, 75});  // 3b^2
  CHECK_FALSE(b.grad().defined());
  ts::Tensor unused = leaf({1}, {1});
  CHECK_THROWS_WITH_AS(ts::autograd::grad({ts::sum(b * 2.0)}, {unused}), doctest::Contains("not used"),
                       ts::Error);
  CHECK_FALSE(ts::autograd::grad({ts::sum(b * 2.0)}, {unused}, {}, false, true)[0].defined());
}

TEST_CASE("type promotion: a float32 leaf used with float64 gets a float32 gradient") {
  ts::Tensor a = ts::from_values(std::vector<float>{1, 2}, {2}).set_requires_grad(true);
  const ts::Tensor b = ts::from_values(std::vector<double>{0.5, 4}, {2}, ts::kFloat64);
  ts::sum(a * b).backward();
  CHECK(a.grad().dtype() == ts::kFloat32);
  check_near(values(a.grad()), {0.5, 4});
}

TEST_CASE("local tensors: one graph, per-rank values, uneven shards, the gradient is a local tensor") {
  ts::Tensor x = ts::local_tensor({{0, ts::from_values(std::vector<double>{1, 2}, {2}, ts::kFloat64)},
                                   {1, ts::from_values(std::vector<double>{3, 4, 5}, {3}, ts::kFloat64)},
                                   {2, ts::from_values(std::vector<double>{}, {0}, ts::kFloat64)}});
  x.set_requires_grad(true);
  const ts::Tensor tracked =
      ts::from_values(std::vector<double>{1}, {1}, ts::kFloat64).set_requires_grad(true);
  CHECK_THROWS_WITH_AS(ts::local_tensor({{0, tracked}}),
                       doctest::Contains("set requires_grad on the local tensor"), ts::Error);
  // A plain weight used by every rank: its gradient holds each rank's contribution.
  ts::Tensor w = ts::from_values(std::vector<double>{2}, {1}, ts::kFloat64).set_requires_grad(true);
  const ts::Tensor loss = ts::sum(x * x * w);
  CHECK(loss.is_local());
  loss.backward();
  const ts::Tensor gx = x.grad();
  REQUIRE(gx.is_local());
  check_near(values(gx.shard(0)), {4, 8});  // 2 x w
  check_near(values(gx.shard(1)), {12, 16, 20});
  CHECK(gx.shard(2).numel() == 0);
  REQUIRE(w.grad().is_local());
  check_near(values(w.grad().shard(0)), {5});  // sum x^2 per rank
  check_near(values(w.grad().shard(1)), {50});
  check_near(values(w.grad().shard(2)), {0});
}

TEST_CASE("two threads record and run backward at once, each on its own graph (thread-local state only)") {
  constexpr int kThreads = 4;
  std::vector<std::vector<double>> grads(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([i, &grads] {
      // A local tensor over 3 ranks, so that the ranks' ops also run on the rank thread pool.
      ts::Tensor x = ts::local_tensor({{0, ts::full({64}, 1.0 + i, ts::kFloat64)},
                                       {1, ts::full({64}, 2.0 + i, ts::kFloat64)},
                                       {2, ts::full({64}, 3.0 + i, ts::kFloat64)}});
      x.set_requires_grad(true);
      for (int step = 0; step < 20; ++step) {
        ts::NoGradGuard off;  // flips this thread's grad mode only
        {
          ts::AutoGradMode on(true);
          ts::sum(ts::exp(x * 0.01) * x).backward();
        }
      }
      grads[static_cast<size_t>(i)] = x.grad().shard(1).to_vector<double>();
    });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    // d/dx sum(exp(0.01 x) x) = exp(0.01 x) (1 + 0.01 x), accumulated over 20 backward calls.
    const double x1 = 2.0 + i;
    const double expected = 20 * std::exp(0.01 * x1) * (1 + 0.01 * x1);
    REQUIRE(grads[static_cast<size_t>(i)].size() == 64);
    for (double g : grads[static_cast<size_t>(i)]) CHECK(g == doctest::Approx(expected).epsilon(1e-12));
  }
}
