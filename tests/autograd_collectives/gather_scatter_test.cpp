// dist::functional::all_gather_tensor and reduce_scatter_tensor: dims 0, 1 and negative, worlds 1,
// 3 and 7, groups of world 4 (sibling fibres and one fibre in a permuted order), empty shards.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "oracle.hpp"

namespace ts = tessera;
namespace fn = ts::dist::functional;

TEST_CASE("functional all_gather_tensor along dims 0 and 1 on worlds 1, 3, 7") {
  for (int world : {1, 3, 7}) {
    CAPTURE(world);
    const oracle::Shards x = oracle::distinct(oracle::same_shape(world, {2, 3}), 0.0);
    for (int64_t dim : {0, 1, -1}) {
      CAPTURE(dim);
      const size_t d = static_cast<size_t>(dim < 0 ? dim + 2 : dim);
      oracle::check_op([dim](const ts::Tensor& t) { return fn::all_gather_tensor(t, dim); },
                       oracle::all_gather(x, oracle::whole(world), d), x, "AllGatherBackward");
    }
  }
}

TEST_CASE("functional all_gather_tensor along the middle dim of a 3-d tensor") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(3, {2, 2, 3}), 0.0);
  oracle::check_op([](const ts::Tensor& t) { return fn::all_gather_tensor(t, 1); },
                   oracle::all_gather(x, oracle::whole(3), 1), x, "AllGatherBackward");
  oracle::check_op([](const ts::Tensor& t) { return fn::all_gather_tensor(t, 2); },
                   oracle::all_gather(x, oracle::whole(3), 2), x, "AllGatherBackward", false);
}

TEST_CASE("functional all_gather_tensor on a group of world 4") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(4, {2, 2}), 0.0);
  SUBCASE("sibling fibres") {
    const ts::ProcessGroup group = ts::ProcessGroup::from_fibres({{0, 2}, {1, 3}});
    for (int64_t dim : {0, 1}) {
      CAPTURE(dim);
      oracle::check_op([&](const ts::Tensor& t) { return fn::all_gather_tensor(t, dim, group); },
                       oracle::all_gather(x, {{0, 2}, {1, 3}}, static_cast<size_t>(dim)), x,
                       "AllGatherBackward");
    }
  }
  SUBCASE("one fibre in group-rank order 2, 0, 3, 1") {
    const ts::ProcessGroup group({2, 0, 3, 1});
    for (int64_t dim : {0, 1}) {
      CAPTURE(dim);
      oracle::check_op([&](const ts::Tensor& t) { return fn::all_gather_tensor(t, dim, group); },
                       oracle::all_gather(x, {{2, 0, 3, 1}}, static_cast<size_t>(dim)), x,
                       "AllGatherBackward");
    }
  }
}

TEST_CASE("functional all_gather_tensor of empty shards") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(3, {0, 2}), 0.0);
  oracle::check_op([](const ts::Tensor& t) { return fn::all_gather_tensor(t, 0); },
                   oracle::all_gather(x, oracle::whole(3), 0), x, "AllGatherBackward");
  oracle::check_op([](const ts::Tensor& t) { return fn::all_gather_tensor(t, 1); },
                   oracle::all_gather(x, oracle::whole(3), 1), x, "AllGatherBackward");
}

TEST_CASE("functional reduce_scatter_tensor SUM, AVG, PREMUL_SUM along dims 0 and 1 on worlds 1, 3, 7") {
  for (int world : {1, 3, 7}) {
    CAPTURE(world);
    for (size_t d : {0u, 1u}) {
      CAPTURE(d);
      ts::Shape shape = {2, 3};
      shape[d] = 2 * world;  // two rows (columns) per block
      const oracle::Shards x = oracle::distinct(oracle::same_shape(world, shape), 0.0);
      const int64_t dim = static_cast<int64_t>(d);
      oracle::check_op(
          [dim](const ts::Tensor& t) { return fn::reduce_scatter_tensor(t, ts::ReduceOp::SUM, dim); },
          oracle::reduce_scatter(x, oracle::whole(world), d, 1.0), x, "ReduceScatterBackward");
      oracle::check_op(
          [dim](const ts::Tensor& t) { return fn::reduce_scatter_tensor(t, ts::ReduceOp::AVG, dim); },
          oracle::reduce_scatter(x, oracle::whole(world), d, 1.0 / world), x, "ReduceScatterBackward",
          world == 3);
      oracle::check_op(
          [dim](const ts::Tensor& t) {
            return fn::reduce_scatter_tensor(t, ts::ReduceOp::premul_sum(2.5), dim);
          },
          oracle::reduce_scatter(x, oracle::whole(world), d, 2.5), x, "ReduceScatterBackward", false);
    }
  }
}

TEST_CASE("functional reduce_scatter_tensor along the last dim of a 3-d tensor, negative dim") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(3, {2, 1, 6}), 0.0);
  oracle::check_op([](const ts::Tensor& t) { return fn::reduce_scatter_tensor(t, ts::ReduceOp::SUM, -1); },
                   oracle::reduce_scatter(x, oracle::whole(3), 2, 1.0), x, "ReduceScatterBackward");
}

TEST_CASE("functional reduce_scatter_tensor on a group of world 4") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(4, {4, 2}), 0.0);
  SUBCASE("sibling fibres") {
    const ts::ProcessGroup group = ts::ProcessGroup::from_fibres({{0, 2}, {1, 3}});
    for (int64_t dim : {0, 1}) {
      CAPTURE(dim);
      oracle::check_op(
          [&](const ts::Tensor& t) { return fn::reduce_scatter_tensor(t, ts::ReduceOp::SUM, dim, group); },
          oracle::reduce_scatter(x, {{0, 2}, {1, 3}}, static_cast<size_t>(dim), 1.0), x,
          "ReduceScatterBackward");
    }
    oracle::check_op(
        [&](const ts::Tensor& t) { return fn::reduce_scatter_tensor(t, ts::ReduceOp::AVG, 0, group); },
        oracle::reduce_scatter(x, {{0, 2}, {1, 3}}, 0, 0.5), x, "ReduceScatterBackward");
  }
  SUBCASE("one fibre in group-rank order 3, 1, 0, 2") {
    const ts::ProcessGroup group({3, 1, 0, 2});
    oracle::check_op(
        [&](const ts::Tensor& t) { return fn::reduce_scatter_tensor(t, ts::ReduceOp::SUM, 0, group); },
        oracle::reduce_scatter(x, {{3, 1, 0, 2}}, 0, 1.0), x, "ReduceScatterBackward");
  }
}

TEST_CASE("functional reduce_scatter_tensor of empty shards") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(3, {3, 0}), 0.0);
  oracle::check_op([](const ts::Tensor& t) { return fn::reduce_scatter_tensor(t, ts::ReduceOp::SUM, 0); },
                   oracle::reduce_scatter(x, oracle::whole(3), 0, 1.0), x, "ReduceScatterBackward");
}

TEST_CASE("functional reduce_scatter_tensor needs the group size to divide the dim") {
  ts::Tensor x = oracle::to_local(oracle::distinct(oracle::same_shape(3, {4, 3}), 0.0));
  CHECK_THROWS_WITH_AS(
      fn::reduce_scatter_tensor(x, ts::ReduceOp::SUM, 0),
      doctest::Contains("dim 0 has size 4 on rank 0, which the group size 3 does not divide"), ts::Error);
  CHECK_NOTHROW(fn::reduce_scatter_tensor(x, ts::ReduceOp::SUM, 1));
}

TEST_CASE("functional reduce_scatter_tensor with MAX: fine without grad, an error with it") {
  const oracle::Shards xs = oracle::distinct(oracle::same_shape(3, {3}), 0.0);
  ts::Tensor x = oracle::to_local(xs);
  const ts::Tensor y = fn::reduce_scatter_tensor(x, ts::ReduceOp::MAX);
  for (int r = 0; r < 3; ++r) CHECK(y.shard(r).to_vector<double>() == std::vector<double>{200.125 + 0.5 * r});
  x.set_requires_grad(true);
  CHECK_THROWS_WITH_AS(
      fn::reduce_scatter_tensor(x, ts::ReduceOp::MAX),
      doctest::Contains("dist::functional::reduce_scatter_tensor: reduce op MAX is not differentiable"),
      ts::Error);
}

TEST_CASE("all_gather then reduce_scatter: two recorded collectives chain in backward") {
  // Along dim 1, y_r is block r of every rank's gathered tensor summed: world * x_r. The gradient
  // is checked against the two definitions composed.
  const int world = 3;
  const oracle::Shards x = oracle::distinct(oracle::same_shape(world, {2, 2}), 0.0);
  const oracle::LinearMap gather = oracle::all_gather(x, oracle::whole(world), 1);
  const oracle::Shards gathered = gather.forward(x);
  const oracle::LinearMap scatter = oracle::reduce_scatter(gathered, oracle::whole(world), 1, 1.0);
  const oracle::Shards c = oracle::seeds(scatter.out_shapes);
  const oracle::Run r = oracle::run(
      [](const ts::Tensor& t) {
        return fn::reduce_scatter_tensor(fn::all_gather_tensor(t, 1), ts::ReduceOp::SUM, 1);
      },
      x, c);
  CHECK(r.grad_fn == "ReduceScatterBackward");
  oracle::check_close(r.y, scatter.forward(gathered), 1e-12, "forward");
  for (const auto& [rank, h] : x)
    for (size_t e = 0; e < h.values.size(); ++e)
      CHECK(r.y.at(rank).values[e] == doctest::Approx(3 * h.values[e]));
  oracle::check_close(r.grad, gather.gradient(scatter.gradient(c, gathered), x), 1e-12, "chained gradient");
}

TEST_CASE("non-contiguous inputs and gradients (transposed views) give the same results") {
  // x is a transposed view of a local tensor; the seed is one too.
  const int world = 3;
  const auto transposed = [](const oracle::Shards& s) {
    oracle::Shards t;
    for (const auto& [rank, h] : s) {
      const int64_t rows = h.shape[0], cols = h.shape[1];
      oracle::Host out{{cols, rows}, std::vector<double>(h.values.size())};
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          out.values[static_cast<size_t>(j * rows + i)] = h.values[static_cast<size_t>(i * cols + j)];
      t[rank] = out;
    }
    return t;
  };
  const oracle::Shards base = oracle::distinct(oracle::same_shape(world, {3, 6}), 0.0);
  const oracle::Shards xs = transposed(base);  // the values x holds: shape {6, 3}
  struct Case {
    const char* name;
    std::function<ts::Tensor(const ts::Tensor&)> f;
    oracle::LinearMap m;
  };
  const std::vector<Case> cases = {
      {"AllReduceBackward", [](const ts::Tensor& t) { return fn::all_reduce(t); },
       oracle::all_reduce(xs, oracle::whole(world), 1.0)},
      {"AllGatherBackward", [](const ts::Tensor& t) { return fn::all_gather_tensor(t, 1); },
       oracle::all_gather(xs, oracle::whole(world), 1)},
      {"ReduceScatterBackward",
       [](const ts::Tensor& t) { return fn::reduce_scatter_tensor(t, ts::ReduceOp::SUM, 0); },
       oracle::reduce_scatter(xs, oracle::whole(world), 0, 1.0)},
      {"AllToAllBackward", [](const ts::Tensor& t) { return fn::all_to_all_single(t); },
       oracle::all_to_all(xs, {{2, 2, 2}, {2, 2, 2}, {2, 2, 2}})},
      {"BroadcastBackward", [](const ts::Tensor& t) { return fn::broadcast(t, 2); },
       oracle::broadcast(xs, oracle::whole(world), 2)},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    ts::Tensor x = oracle::to_local(base).transpose(0, 1);
    REQUIRE_FALSE(x.shard(0).is_contiguous());
    x.set_requires_grad(true);
    const ts::Tensor y = c.f(x);
    CHECK(y.grad_fn_name() == c.name);
    const oracle::Shards seed = oracle::seeds(c.m.out_shapes);
    const ts::Tensor seed_view = oracle::to_local(transposed(seed)).transpose(0, 1);
    REQUIRE_FALSE(seed_view.shard(0).is_contiguous());
    y.backward(seed_view);
    oracle::check_close(oracle::from_local(y), c.m.forward(xs), 1e-12, "forward");
    oracle::check_close(oracle::from_local(x.grad()), c.m.gradient(seed, xs), 1e-12, "gradient");
  }
}
