// A 2-layer MLP, loss = sum((relu(x W1 + b1) W2 + b2) * C), whose gradients are written out by hand
// with plain double loops (no autograd, no tensor ops) and compared with backward(): dense, and on
// local tensors over 3 ranks with different x (and batch sizes) per rank.
#include "gradcheck.hpp"

namespace ts = tessera;
using gc::Values;

namespace {

constexpr int64_t D = 3, H = 5, O = 2;

struct Params {
  Values w1, b1, w2, b2;  // [D,H], [H], [H,O], [O], row-major
};

struct Grads {
  Values w1, b1, w2, b2;
  double loss = 0;
};

Params make_params(uint64_t seed) {
  return {gc::uniform(D * H, seed, -1, 1), gc::uniform(H, seed + 1, -0.5, 0.5),
          gc::uniform(H * O, seed + 2, -1, 1), gc::uniform(O, seed + 3, -0.5, 0.5)};
}

// The backward pass by hand. x is [n,D], c (the loss weights) [n,O].
//   z = x W1 + b1, h = relu(z), y = h W2 + b2, loss = sum(y * c)
//   dy = c, dW2 = h^T dy, db2 = sum_rows dy, dh = dy W2^T, dz = dh * (z > 0),
//   dW1 = x^T dz, db1 = sum_rows dz.
Grads mlp_by_hand(const Values& x, const Values& c, int64_t n, const Params& p) {
  Grads g{Values(D * H, 0.0), Values(H, 0.0), Values(H * O, 0.0), Values(O, 0.0), 0};
  for (int64_t i = 0; i < n; ++i) {
    double z[H], h[H], dh[H];
    for (int64_t k = 0; k < H; ++k) {
      z[k] = p.b1[k];
      for (int64_t d = 0; d < D; ++d) z[k] += x[i * D + d] * p.w1[d * H + k];
      REQUIRE_MESSAGE(std::abs(z[k]) > 1e-9, "relu kink at row " << i << " unit " << k);
      h[k] = z[k] > 0 ? z[k] : 0;
    }
    for (int64_t o = 0; o < O; ++o) {
      double y = p.b2[o];
      for (int64_t k = 0; k < H; ++k) y += h[k] * p.w2[k * O + o];
      const double dy = c[i * O + o];
      g.loss += y * dy;
      g.b2[o] += dy;
      for (int64_t k = 0; k < H; ++k) g.w2[k * O + o] += h[k] * dy;
    }
    for (int64_t k = 0; k < H; ++k) {
      dh[k] = 0;
      for (int64_t o = 0; o < O; ++o) dh[k] += c[i * O + o] * p.w2[k * O + o];
      const double dz = z[k] > 0 ? dh[k] : 0;
      g.b1[k] += dz;
      for (int64_t d = 0; d < D; ++d) g.w1[d * H + k] += x[i * D + d] * dz;
    }
  }
  return g;
}

struct Leaves {
  ts::Tensor w1, b1, w2, b2;
};

Leaves dense_leaves(const Params& p) {
  return {gc::dense(p.w1, {D, H}).set_requires_grad(true), gc::dense(p.b1, {H}).set_requires_grad(true),
          gc::dense(p.w2, {H, O}).set_requires_grad(true), gc::dense(p.b2, {O}).set_requires_grad(true)};
}

ts::Tensor forward(const ts::Tensor& x, const Leaves& l, const ts::Tensor& c) {
  return ts::sum((ts::matmul(ts::relu(ts::matmul(x, l.w1) + l.b1), l.w2) + l.b2) * c);
}

// Whether at least one hidden unit is inactive somewhere, so the relu mask matters.
bool some_unit_inactive(const Values& x, int64_t n, const Params& p) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < H; ++k) {
      double z = p.b1[k];
      for (int64_t d = 0; d < D; ++d) z += x[i * D + d] * p.w1[d * H + k];
      if (z < 0) return true;
    }
  return false;
}

}  // namespace

TEST_CASE("MLP, dense float64: backward against the gradients by hand") {
  const int64_t n = 4;
  const Params p = make_params(500);
  const Values x = gc::uniform(n * D, 510, -2, 2), c = gc::uniform(n * O, 511, -1.5, 1.5);
  REQUIRE(some_unit_inactive(x, n, p));
  const Grads expected = mlp_by_hand(x, c, n, p);
  const Leaves l = dense_leaves(p);
  const ts::Tensor loss = forward(gc::dense(x, {n, D}), l, gc::dense(c, {n, O}));
  CHECK(loss.item<double>() == doctest::Approx(expected.loss).epsilon(1e-12));
  loss.backward();
  gc::check_grad(l.w1.grad(), {D, H}, expected.w1, "dW1", 1e-12);
  gc::check_grad(l.b1.grad(), {H}, expected.b1, "db1", 1e-12);
  gc::check_grad(l.w2.grad(), {H, O}, expected.w2, "dW2", 1e-12);
  gc::check_grad(l.b2.grad(), {O}, expected.b2, "db2", 1e-12);

  // A second backward (fresh graph) accumulates: twice the gradient.
  forward(gc::dense(x, {n, D}), l, gc::dense(c, {n, O})).backward();
  Values twice = expected.w1;
  for (double& v : twice) v *= 2;
  gc::check_grad(l.w1.grad(), {D, H}, twice, "dW1 after two backwards", 1e-12);
}

namespace {
// Each rank's weight gradients (local tensors over 3 ranks) against that rank's MLP by hand.
void check_weight_grads_per_rank(const Leaves& l, const std::vector<Grads>& expected) {
  auto per_rank = [&](Values Grads::*field) {
    std::vector<Values> v;
    for (const Grads& g : expected) v.push_back(g.*field);
    return v;
  };
  gc::check_local_grad(l.w1.grad(), {{D, H}, {D, H}, {D, H}}, per_rank(&Grads::w1), "dW1", 1e-12);
  gc::check_local_grad(l.b1.grad(), {{H}, {H}, {H}}, per_rank(&Grads::b1), "db1", 1e-12);
  gc::check_local_grad(l.w2.grad(), {{H, O}, {H, O}, {H, O}}, per_rank(&Grads::w2), "dW2", 1e-12);
  gc::check_local_grad(l.b2.grad(), {{O}, {O}, {O}}, per_rank(&Grads::b2), "db2", 1e-12);
}
}  // namespace

TEST_CASE("MLP, local x over 3 ranks with plain weights: each rank's contribution") {
  const std::vector<int64_t> rows = {2, 3, 1};
  const Params p = make_params(520);
  std::vector<Values> xs, cs;
  std::vector<ts::Tensor> x_shards, c_shards;
  bool inactive = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    xs.push_back(gc::uniform(rows[r] * D, 530 + r, -2, 2));
    cs.push_back(gc::uniform(rows[r] * O, 540 + r, -1.5, 1.5));
    x_shards.push_back(gc::dense(xs[r], {rows[r], D}));
    c_shards.push_back(gc::dense(cs[r], {rows[r], O}));
    inactive = inactive || some_unit_inactive(xs[r], rows[r], p);
  }
  REQUIRE(inactive);
  const Leaves l = dense_leaves(p);
  const ts::Tensor loss = forward(gc::local(x_shards), l, gc::local(c_shards));
  REQUIRE(loss.is_local());
  loss.backward();

  std::vector<Grads> expected;
  for (size_t r = 0; r < rows.size(); ++r) expected.push_back(mlp_by_hand(xs[r], cs[r], rows[r], p));
  for (size_t r = 0; r < rows.size(); ++r)
    CHECK(loss.shard(static_cast<int>(r)).item<double>() == doctest::Approx(expected[r].loss).epsilon(1e-12));
  check_weight_grads_per_rank(l, expected);
}

TEST_CASE("MLP, local x and local weights (different per rank) requiring grad") {
  const std::vector<int64_t> rows = {3, 1, 2};
  std::vector<Params> ps;
  std::vector<Values> xs, cs;
  std::vector<ts::Tensor> x_shards, c_shards, w1s, b1s, w2s, b2s;
  for (size_t r = 0; r < rows.size(); ++r) {
    ps.push_back(make_params(600 + 10 * r));
    xs.push_back(gc::uniform(rows[r] * D, 650 + r, -2, 2));
    cs.push_back(gc::uniform(rows[r] * O, 660 + r, -1.5, 1.5));
    x_shards.push_back(gc::dense(xs[r], {rows[r], D}));
    c_shards.push_back(gc::dense(cs[r], {rows[r], O}));
    w1s.push_back(gc::dense(ps[r].w1, {D, H}));
    b1s.push_back(gc::dense(ps[r].b1, {H}));
    w2s.push_back(gc::dense(ps[r].w2, {H, O}));
    b2s.push_back(gc::dense(ps[r].b2, {O}));
  }
  const Leaves l = {gc::local(w1s).set_requires_grad(true), gc::local(b1s).set_requires_grad(true),
                    gc::local(w2s).set_requires_grad(true), gc::local(b2s).set_requires_grad(true)};
  ts::Tensor x = gc::local(x_shards).set_requires_grad(true);
  const ts::Tensor loss = forward(x, l, gc::local(c_shards));
  loss.backward();

  std::vector<Grads> expected;
  for (size_t r = 0; r < rows.size(); ++r) expected.push_back(mlp_by_hand(xs[r], cs[r], rows[r], ps[r]));
  check_weight_grads_per_rank(l, expected);

  // dx by hand: dz W1^T per row, with dz = (c W2^T) * (z > 0).
  std::vector<Values> dx;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Params& p = ps[r];
    Values g(static_cast<size_t>(rows[r] * D), 0.0);
    for (int64_t i = 0; i < rows[r]; ++i)
      for (int64_t k = 0; k < H; ++k) {
        double z = p.b1[k], dh = 0;
        for (int64_t d = 0; d < D; ++d) z += xs[r][i * D + d] * p.w1[d * H + k];
        for (int64_t o = 0; o < O; ++o) dh += cs[r][i * O + o] * p.w2[k * O + o];
        if (z > 0)
          for (int64_t d = 0; d < D; ++d) g[i * D + d] += dh * p.w1[d * H + k];
      }
    dx.push_back(g);
  }
  gc::check_local_grad(x.grad(), {{rows[0], D}, {rows[1], D}, {rows[2], D}}, dx, "dx", 1e-12);
}

TEST_CASE("MLP through gradcheck: dense and local, every input") {
  const gc::Fn mlp = [](const std::vector<ts::Tensor>& in) {
    return ts::matmul(ts::relu(ts::matmul(in[0], in[1]) + in[2]), in[3]) + in[4];
  };
  const Params p = make_params(700);
  const std::vector<ts::Tensor> weights = {gc::dense(p.w1, {D, H}), gc::dense(p.b1, {H}),
                                           gc::dense(p.w2, {H, O}), gc::dense(p.b2, {O})};
  gc::gradcheck("mlp dense", {gc::rand_in({4, D}, 710), weights[0], weights[1], weights[2], weights[3]}, mlp);
  gc::gradcheck(
      "mlp local x, plain weights",
      {gc::local_rand({{2, D}, {3, D}, {1, D}}, 720), weights[0], weights[1], weights[2], weights[3]}, mlp);
}
