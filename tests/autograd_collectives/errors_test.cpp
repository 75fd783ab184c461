// What the functional collectives refuse, what the in-place collectives refuse on tensors that
// require grad, and how recorded collectives behave in the autograd graph (accumulation,
// autograd::grad, retain_graph).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "oracle.hpp"

namespace ts = tessera;
namespace fn = ts::dist::functional;

namespace {

ts::Tensor leaf(int world, const ts::Shape& shape) {
  return oracle::to_local(oracle::distinct(oracle::same_shape(world, shape), 0.0)).set_requires_grad(true);
}

ts::Tensor plain(int world, const ts::Shape& shape) {
  return oracle::to_local(oracle::distinct(oracle::same_shape(world, shape), 0.0));
}

// The in-place collective must refuse, naming itself and the way out; under NoGradGuard it runs.
template <class F>
void check_refused(const char* op, const char* instead, F&& call) {
  CAPTURE(op);
  try {
    call();
    FAIL("expected an error");
  } catch (const ts::Error& e) {
    const std::string what = e.what();
    CHECK(what.rfind(op, 0) == 0);
    CHECK(what.find("requires grad") != std::string::npos);
    CHECK(what.find(instead) != std::string::npos);
  }
  ts::NoGradGuard off;
  CHECK_NOTHROW(call());
}

}  // namespace

TEST_CASE("in-place collectives on a tensor that requires grad are errors naming the functional form") {
  const int n = 3;
  check_refused("dist::all_reduce: ", "ts::dist::functional::all_reduce", [&] {
    ts::Tensor t = leaf(n, {2});
    ts::dist::all_reduce(t);
  });
  check_refused("dist::broadcast: ", "ts::dist::functional::broadcast", [&] {
    ts::Tensor t = leaf(n, {2});
    ts::dist::broadcast(t, 1);
  });
  check_refused("dist::reduce: ", "ts::dist::functional::all_reduce", [&] {
    ts::Tensor t = leaf(n, {2});
    ts::dist::reduce(t, 0);
  });
  check_refused("dist::all_gather_into_tensor: ", "ts::dist::functional::all_gather_tensor", [&] {
    ts::Tensor out = leaf(n, {6});
    ts::dist::all_gather_into_tensor(out, plain(n, {2}));
  });
  check_refused("dist::all_gather: ", "ts::dist::functional::all_gather_tensor", [&] {
    std::vector<ts::Tensor> outs = {plain(n, {2}), leaf(n, {2}), plain(n, {2})};
    ts::dist::all_gather(outs, plain(n, {2}));
  });
  check_refused("dist::reduce_scatter_tensor: ", "ts::dist::functional::reduce_scatter_tensor", [&] {
    ts::Tensor out = leaf(n, {1});
    ts::dist::reduce_scatter_tensor(out, plain(n, {3}));
  });
  check_refused("dist::reduce_scatter: ", "ts::dist::functional::reduce_scatter_tensor", [&] {
    ts::Tensor out = leaf(n, {2});
    ts::dist::reduce_scatter(out, {plain(n, {2}), plain(n, {2}), plain(n, {2})});
  });
  check_refused("dist::all_to_all_single: ", "ts::dist::functional::all_to_all_single", [&] {
    ts::Tensor out = leaf(n, {3});
    ts::dist::all_to_all_single(out, plain(n, {3}));
  });
  check_refused("dist::all_to_all: ", "ts::dist::functional::all_to_all_single", [&] {
    std::vector<ts::Tensor> outs = {plain(n, {2}), plain(n, {2}), leaf(n, {2})};
    ts::dist::all_to_all(outs, {plain(n, {2}), plain(n, {2}), plain(n, {2})});
  });
  check_refused("dist::scatter: ", "not differentiable", [&] {
    ts::Tensor out = leaf(n, {2});
    ts::dist::scatter(out, {plain(n, {2}), plain(n, {2}), plain(n, {2})}, 0);
  });
  check_refused("dist::gather: ", "not differentiable", [&] {
    std::vector<ts::Tensor> outs = {leaf(n, {2}), plain(n, {2}), plain(n, {2})};
    ts::dist::gather(outs, plain(n, {2}), 0);
  });
}

TEST_CASE("recv into a tensor that requires grad is an error") {
  ts::Tensor t = leaf(2, {2});
  ts::dist::send(plain(2, {2}), ts::LocalInt{{0, 1}, {1, -1}});
  CHECK_THROWS_WITH_AS(ts::dist::recv(t, ts::LocalInt{{0, -1}, {1, 0}}),
                       doctest::Contains("dist::recv: the tensor requires grad"), ts::Error);
  {
    ts::NoGradGuard off;
    ts::dist::recv(t, ts::LocalInt{{0, -1}, {1, 0}});
  }
  CHECK(t.shard(1).to_vector<double>() == std::vector<double>{0.125, 0.625});  // rank 0's values
  CHECK_NOTHROW(ts::dist::check_messages());
}

TEST_CASE("in-place collectives on a non-leaf that requires grad are errors too, inputs may require grad") {
  ts::Tensor x = leaf(3, {2});
  ts::Tensor y = fn::all_reduce(x);
  CHECK_THROWS_WITH_AS(ts::dist::all_reduce(y),
                       doctest::Contains("dist::all_reduce: the tensor requires grad"), ts::Error);
  // Reading a tensor that requires grad into a plain output is allowed (nothing is recorded).
  ts::Tensor out = plain(3, {6});
  CHECK_NOTHROW(ts::dist::all_gather_into_tensor(out, x));
  CHECK_FALSE(out.requires_grad());
}

TEST_CASE("functional collectives need a local input") {
  const ts::Tensor dense = ts::tensor({1.0, 2.0, 3.0});
  const auto check = [](const char* op, auto&& call) {
    CAPTURE(op);
    const std::string expected = std::string(op) + ": the input must be a local tensor";
    CHECK_THROWS_WITH_AS(call(), doctest::Contains(expected.c_str()), ts::Error);
  };
  check("dist::functional::all_reduce", [&] { return fn::all_reduce(dense); });
  check("dist::functional::all_gather_tensor", [&] { return fn::all_gather_tensor(dense); });
  check("dist::functional::reduce_scatter_tensor", [&] { return fn::reduce_scatter_tensor(dense); });
  check("dist::functional::all_to_all_single", [&] { return fn::all_to_all_single(dense); });
  check("dist::functional::broadcast", [&] { return fn::broadcast(dense, 0); });
  CHECK_THROWS_WITH_AS(fn::all_reduce(ts::Tensor()),
                       doctest::Contains("dist::functional::all_reduce: the input is undefined"), ts::Error);
}

TEST_CASE("functional collectives: dims out of range, 0-d inputs, groups that leave a rank out") {
  const ts::Tensor x = plain(3, {2, 3});
  CHECK_THROWS_WITH_AS(
      fn::all_gather_tensor(x, 2),
      doctest::Contains("gather dim 2 is out of range for a 2-dimensional input; expected -2..1"), ts::Error);
  CHECK_THROWS_WITH_AS(fn::reduce_scatter_tensor(x, ts::ReduceOp::SUM, -3),
                       doctest::Contains("scatter dim -3 is out of range"), ts::Error);
  const ts::Tensor scalars = plain(3, {});
  CHECK_THROWS_WITH_AS(fn::all_gather_tensor(scalars), doctest::Contains("the input is 0-dimensional"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(fn::all_to_all_single(scalars), doctest::Contains("the input is 0-dimensional"),
                       ts::Error);
  const ts::Tensor four = plain(4, {2});
  CHECK_THROWS_WITH_AS(fn::all_gather_tensor(four, 0, ts::ProcessGroup({0, 1})),
                       doctest::Contains("the input holds rank 2, which is in no fibre of group"), ts::Error);
  CHECK_THROWS_WITH_AS(fn::all_reduce(four, ts::ReduceOp::SUM, ts::ProcessGroup({1, 3})),
                       doctest::Contains("the input holds rank 0, which is in no fibre of group"), ts::Error);
}

TEST_CASE("errors of the collective a functional one runs on name the functional call") {
  const ts::Tensor uneven =
      ts::local_tensor({{0, ts::zeros({2}, ts::kFloat64)}, {1, ts::zeros({3}, ts::kFloat64)}});
  CHECK_THROWS_WITH_AS(
      fn::all_gather_tensor(uneven),
      doctest::Contains("dist::functional::all_gather_tensor: all_gather_into_tensor: the input has "
                        "shape [2] on rank 0 but [3] on rank 1"),
      ts::Error);
  CHECK_THROWS_WITH_AS(fn::all_reduce(uneven),
                       doctest::Contains("dist::functional::all_reduce: all_reduce: "), ts::Error);
  const ts::Tensor ints = ts::local_tensor({{0, ts::tensor({1, 2})}, {1, ts::tensor({3, 4})}});
  CHECK_THROWS_WITH_AS(
      fn::all_reduce(ints, ts::ReduceOp::AVG),
      doctest::Contains("dist::functional::all_reduce: all_reduce: reduce op AVG needs a floating "
                        "tensor, got int64"),
      ts::Error);
}

TEST_CASE("gradients of several collectives of one input accumulate") {
  // y1 = all_reduce(x), y2 = broadcast(x, 1): dL/dx_k = sum_r c1_r + [k == 1] sum_r c2_r.
  const int world = 3;
  const oracle::Shards xs = oracle::distinct(oracle::same_shape(world, {2}), 0.0);
  const oracle::Shards c1 = oracle::seeds(oracle::same_shape(world, {2}));
  oracle::Shards c2 = c1;
  for (auto& [rank, h] : c2)
    for (double& v : h.values) v = 10 * v + rank;
  ts::Tensor x = oracle::to_local(xs).set_requires_grad(true);
  ts::Tensor y1 = fn::all_reduce(x);
  ts::Tensor y2 = fn::broadcast(x, 1);
  ts::autograd::backward({y1, y2}, {oracle::to_local(c1), oracle::to_local(c2)});
  oracle::Shards want = xs;
  for (int k = 0; k < world; ++k)
    for (size_t e = 0; e < 2; ++e) {
      double g = 0;
      for (int r = 0; r < world; ++r) g += c1.at(r).values[e] + (k == 1 ? c2.at(r).values[e] : 0.0);
      want[k].values[e] = g;
    }
  oracle::check_close(oracle::from_local(x.grad()), want, 1e-12, "accumulated gradient");

  // A second backward (a fresh graph) adds to .grad().
  fn::all_reduce(x).backward(oracle::to_local(c1));
  for (int k = 0; k < world; ++k)
    for (size_t e = 0; e < 2; ++e)
      for (int r = 0; r < world; ++r) want[k].values[e] += c1.at(r).values[e];
  oracle::check_close(oracle::from_local(x.grad()), want, 1e-12, "after a second backward");
}

TEST_CASE("autograd::grad through a collective leaves .grad() alone, a freed graph is refused") {
  const oracle::Shards xs = oracle::distinct(oracle::same_shape(3, {2, 3}), 0.0);
  const oracle::Shards c = oracle::seeds(oracle::same_shape(3, {2, 9}));
  ts::Tensor x = oracle::to_local(xs).set_requires_grad(true);
  ts::Tensor y = fn::all_gather_tensor(x, 1);
  const std::vector<ts::Tensor> g =
      ts::autograd::grad({y}, {x}, {oracle::to_local(c)}, /*retain_graph=*/true);
  CHECK_FALSE(x.grad().defined());
  oracle::check_close(oracle::from_local(g.at(0)),
                      oracle::all_gather(xs, oracle::whole(3), 1).gradient(c, xs), 1e-12, "autograd::grad");
  y.backward(oracle::to_local(c));  // the retained graph runs again, then is freed
  oracle::check_close(oracle::from_local(x.grad()), oracle::from_local(g.at(0)), 0.0, "backward after grad");
  CHECK_THROWS_WITH_AS(y.backward(oracle::to_local(c)), doctest::Contains("AllGatherBackward"), ts::Error);
}
