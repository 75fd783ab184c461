// dist::functional::all_reduce: forward and gradient against the definition (oracle.hpp) and
// finite differences, on worlds 1, 3 and 7 and on groups; the reduce ops that have no gradient.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "oracle.hpp"

namespace ts = tessera;
namespace fn = ts::dist::functional;

TEST_CASE("functional all_reduce SUM, AVG and PREMUL_SUM: forward, gradient, finite differences") {
  for (int world : {1, 3, 7}) {
    CAPTURE(world);
    const oracle::Shards x = oracle::distinct(oracle::same_shape(world, {2, 3}), 0.0);
    const double n = world;
    SUBCASE("SUM") {
      oracle::check_op([](const ts::Tensor& t) { return fn::all_reduce(t, ts::ReduceOp::SUM); },
                       oracle::all_reduce(x, oracle::whole(world), 1.0), x, "AllReduceBackward");
    }
    SUBCASE("AVG") {
      oracle::check_op([](const ts::Tensor& t) { return fn::all_reduce(t, ts::ReduceOp::AVG); },
                       oracle::all_reduce(x, oracle::whole(world), 1.0 / n), x, "AllReduceBackward");
    }
    SUBCASE("PREMUL_SUM") {
      oracle::check_op([](const ts::Tensor& t) { return fn::all_reduce(t, ts::ReduceOp::premul_sum(-0.75)); },
                       oracle::all_reduce(x, oracle::whole(world), -0.75), x, "AllReduceBackward");
    }
  }
}

TEST_CASE("functional all_reduce over a group's fibres: each fibre reduces on its own") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(4, {3}), 0.0);
  const ts::ProcessGroup group = ts::ProcessGroup::from_fibres({{0, 2}, {3, 1}});
  oracle::check_op([&](const ts::Tensor& t) { return fn::all_reduce(t, ts::ReduceOp::SUM, group); },
                   oracle::all_reduce(x, {{0, 2}, {3, 1}}, 1.0), x, "AllReduceBackward");
  oracle::check_op([&](const ts::Tensor& t) { return fn::all_reduce(t, ts::ReduceOp::AVG, group); },
                   oracle::all_reduce(x, {{0, 2}, {3, 1}}, 0.5), x, "AllReduceBackward");
}

TEST_CASE("functional all_reduce on empty shards and on 0-d shards") {
  const oracle::Shards empty = oracle::distinct(oracle::same_shape(3, {0, 4}), 0.0);
  oracle::check_op([](const ts::Tensor& t) { return fn::all_reduce(t); },
                   oracle::all_reduce(empty, oracle::whole(3), 1.0), empty, "AllReduceBackward");
  const oracle::Shards scalars = oracle::distinct(oracle::same_shape(3, {}), 0.0);
  oracle::check_op([](const ts::Tensor& t) { return fn::all_reduce(t); },
                   oracle::all_reduce(scalars, oracle::whole(3), 1.0), scalars, "AllReduceBackward");
}

TEST_CASE("functional all_reduce leaves its input alone and records nothing without grad") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(3, {2, 2}), 0.0);
  ts::Tensor input = oracle::to_local(x);
  const int64_t version = input.version();
  ts::Tensor y = fn::all_reduce(input);
  CHECK_FALSE(y.requires_grad());
  CHECK(y.grad_fn_name().empty());
  CHECK(input.version() == version);
  oracle::check_close(oracle::from_local(input), x, 0.0, "input unchanged");
  oracle::check_close(oracle::from_local(y), oracle::all_reduce(x, oracle::whole(3), 1.0).forward(x), 1e-12,
                      "forward");

  ts::Tensor leaf = oracle::to_local(x).set_requires_grad(true);
  {
    ts::NoGradGuard off;
    CHECK_FALSE(fn::all_reduce(leaf).requires_grad());
  }
  CHECK(fn::all_reduce(leaf).requires_grad());
  oracle::check_close(oracle::from_local(leaf), x, 0.0, "a leaf input unchanged");
}

TEST_CASE("functional all_reduce in float32: the gradient is float32 and right") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(3, {4}), 0.0);
  const oracle::Shards c = oracle::seeds(oracle::same_shape(3, {4}));
  const oracle::LinearMap m = oracle::all_reduce(x, oracle::whole(3), 1.0);
  const oracle::Run r =
      oracle::run([](const ts::Tensor& t) { return fn::all_reduce(t); }, x, c, ts::kFloat32);
  oracle::check_close(r.y, m.forward(x), 1e-6, "forward");
  oracle::check_close(r.grad, m.gradient(c, x), 1e-6, "gradient");
}

TEST_CASE("functional all_reduce with a reduce op that has no gradient") {
  ts::Tensor x = oracle::to_local(oracle::distinct(oracle::same_shape(3, {2}), 0.0));
  // Without grad every op runs: MAX gives the largest shard (rank 2's, by construction).
  oracle::check_close(
      oracle::from_local(fn::all_reduce(x, ts::ReduceOp::MAX)),
      {{0, {{2}, {200.125, 200.625}}}, {1, {{2}, {200.125, 200.625}}}, {2, {{2}, {200.125, 200.625}}}}, 0.0,
      "MAX forward");
  x.set_requires_grad(true);
  for (ts::ReduceOp op : {ts::ReduceOp(ts::ReduceOp::MAX), ts::ReduceOp(ts::ReduceOp::MIN),
                          ts::ReduceOp(ts::ReduceOp::PRODUCT)}) {
    CAPTURE(op.to_string());
    try {
      fn::all_reduce(x, op);
      FAIL("expected an error");
    } catch (const ts::Error& e) {
      const std::string what = e.what();
      CHECK(what.find("dist::functional::all_reduce") != std::string::npos);
      CHECK(what.find(op.to_string()) != std::string::npos);
      CHECK(what.find("not differentiable") != std::string::npos);
      CHECK(what.find("SUM, AVG") != std::string::npos);
    }
  }
  ts::NoGradGuard off;  // without recording, MAX is just a reduction
  CHECK(fn::all_reduce(x, ts::ReduceOp::MAX).shard(0).to_vector<double>() ==
        std::vector<double>{200.125, 200.625});
}
