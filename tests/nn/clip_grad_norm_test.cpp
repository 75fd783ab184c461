// nn::utils::clip_grad_norm_ against a dense oracle: the same gradients as plain doubles, their
// p-norm and PyTorch's coefficient min(max_norm / (total + 1e-6), 1) computed here in loops. DTensor
// gradients (Shard(0), Shard(1), Replicate, uneven and empty shards, 2-d meshes and a sub-mesh, a
// Partial gradient) must give the global norm of their full tensors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tessera/nn/utils.hpp>
#include <tessera/observe.hpp>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;
using ts::nn::utils::clip_grad_norm_;
using ts::nn::utils::clip_grad_norm_per_rank_;
using ClipValues = std::vector<double>;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The p-norm of all the values together (the largest |v| for p = inf).
double dense_norm(const std::vector<ClipValues>& grads, double p) {
  double acc = 0.0;
  for (const ClipValues& g : grads)
    for (double v : g) acc = std::isinf(p) ? std::max(acc, std::abs(v)) : acc + std::pow(std::abs(v), p);
  return std::isinf(p) ? acc : std::pow(acc, 1.0 / p);
}

double coefficient(double total, double max_norm) { return std::min(max_norm / (total + 1e-6), 1.0); }

ClipValues scaled(ClipValues g, double coef) {
  for (double& v : g) v *= coef;
  return g;
}

// Values with a spread of magnitudes and signs: element k of a gradient tagged `seed`.
ClipValues values(int64_t n, double seed) {
  ClipValues v;
  for (int64_t k = 0; k < n; ++k)
    v.push_back(std::sin(seed + 0.7 * static_cast<double>(k)) * (1.0 + 0.1 * static_cast<double>(k)));
  return v;
}

ts::Tensor plain(const ClipValues& v, const ts::Shape& shape, ts::DType dtype = ts::kFloat64) {
  return ts::from_values(v, shape, dtype);
}

void check_values(const ts::Tensor& actual, const ClipValues& expected, double rel, const char* what) {
  const ClipValues got = actual.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t k = 0; k < got.size(); ++k)
    CHECK_MESSAGE(got[k] == doctest::Approx(expected[k]).epsilon(rel), what << " element " << k);
}

// A DTensor parameter of the given layout whose gradient (same layout) holds `grad`.
ts::DTensor dtensor_with_grad(const ts::DeviceMesh& mesh, const ts::Placements& placements,
                              const ts::Shape& shape, const ClipValues& grad, ts::LocalMode& mode) {
  ts::Tensor full_value, full_grad;
  {
    auto off = mode.disable();
    full_value = ts::zeros(shape, ts::kFloat64);
    full_grad = plain(grad, shape);
  }
  ts::DTensor param = ts::distribute_tensor(full_value, mesh, placements);
  ts::Tensor local = param.to_local();
  local.set_grad(ts::distribute_tensor(full_grad, mesh, placements).to_local());
  return param;
}

}  // namespace

TEST_CASE("plain tensors: total 2-norm, scaled gradients, a parameter without a gradient skipped") {
  for (ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
    CAPTURE(ts::dtype_name(dtype));
    const ClipValues ga = values(6, 0.3), gb = values(4, 1.9);
    ts::Tensor a = plain(ClipValues(6, 0.0), {2, 3}, dtype), b = plain(ClipValues(4, 0.0), {4}, dtype);
    ts::Tensor no_grad = plain({1.0}, {1}, dtype);
    a.set_grad(plain(ga, {2, 3}, dtype));
    b.set_grad(plain(gb, {4}, dtype));
    const double expected_total = dense_norm({ga, gb}, 2.0);
    const double max_norm = expected_total / 4;
    const double rel = dtype == ts::kFloat32 ? 1e-6 : 1e-13;
    const double total = clip_grad_norm_(std::vector<ts::Tensor>{a, no_grad, b}, max_norm);
    CHECK(total == doctest::Approx(expected_total).epsilon(rel));
    const double coef = coefficient(expected_total, max_norm);
    check_values(a.grad(), scaled(ga, coef), rel, "a");
    check_values(b.grad(), scaled(gb, coef), rel, "b");
    CHECK(a.grad().dtype() == dtype);
    CHECK_FALSE(no_grad.grad().defined());
    // Clipped: the new total is max_norm (up to the 1e-6 in the coefficient).
    CHECK(clip_grad_norm_({a, b}, 1e9) == doctest::Approx(max_norm).epsilon(1e-5));
  }
}

TEST_CASE("gradients whose total is at most max_norm are left as they are, not rewritten") {
  ts::Tensor a = plain({0.0, 0.0}, {2});
  const ts::Tensor grad = plain({3.0, 4.0}, {2});
  a.set_grad(grad);
  const int64_t version = grad.version();
  CHECK(clip_grad_norm_({a}, 5.0) == 5.0);  // coefficient 5 / (5 + 1e-6) < 1: PyTorch scales here
  CHECK(grad.version() == version + 1);
  const ts::Tensor grad2 = plain({3.0, 4.0}, {2});
  a.set_grad(grad2);
  CHECK(clip_grad_norm_({a}, 6.0) == 5.0);
  CHECK(grad2.version() == version);
  CHECK(grad2.to_vector<double>() == ClipValues{3.0, 4.0});
  // No gradient at all: total 0, nothing to do.
  ts::Tensor none = plain({1.0}, {1});
  CHECK(clip_grad_norm_({none}, 1.0) == 0.0);
}

TEST_CASE("norm types 1, 3 and inf") {
  for (double p : {1.0, 3.0, kInf}) {
    CAPTURE(p);
    const ClipValues ga = values(5, 0.1), gb = values(3, 2.5);
    ts::Tensor a = plain(ClipValues(5, 0.0), {5}), b = plain(ClipValues(3, 0.0), {3});
    a.set_grad(plain(ga, {5}));
    b.set_grad(plain(gb, {3}));
    const double expected_total = dense_norm({ga, gb}, p);
    const double total = clip_grad_norm_({a, b}, 0.5, p);
    CHECK(total == doctest::Approx(expected_total).epsilon(1e-13));
    check_values(a.grad(), scaled(ga, coefficient(expected_total, 0.5)), 1e-13, "a");
    check_values(b.grad(), scaled(gb, coefficient(expected_total, 0.5)), 1e-13, "b");
  }
}

TEST_CASE("DTensor gradients on a 1-d mesh: the global norm, for Shard(0), Shard(1) and Replicate") {
  for (int world : {1, 3, 4}) {
    for (const char* layout : {"S(0)", "S(1)", "R"}) {
      for (double p : {2.0, kInf}) {
        CAPTURE(world);
        CAPTURE(layout);
        CAPTURE(p);
        ts::LocalMode mode(world);
        const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {world});
        // 7 x 5 over 3 or 4 ranks: uneven shards along either dim, and an empty one (5 columns in
        // chunks of 2 over 4 ranks: 2, 2, 1, 0).
        const ClipValues gw = values(35, 0.4), gv = values(3, 1.1);
        const ts::DTensor w = dtensor_with_grad(mesh, ts::parse_placements(layout), {7, 5}, gw, mode);
        const ts::DTensor v = dtensor_with_grad(mesh, {ts::Replicate()}, {3}, gv, mode);
        const double expected_total = dense_norm({gw, gv}, p);
        const double max_norm = 0.25 * expected_total;
        const double total = clip_grad_norm_({w, v}, max_norm, p);
        CHECK(total == doctest::Approx(expected_total).epsilon(1e-13));
        const double coef = coefficient(expected_total, max_norm);
        check_values(w.grad().full_tensor().reconcile(), scaled(gw, coef), 1e-13, "w");
        check_values(v.grad().full_tensor().reconcile(), scaled(gv, coef), 1e-13, "v");
      }
    }
  }
}

TEST_CASE("2-d meshes and a sub-mesh combine into one global norm") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  const ClipValues g1 = values(30, 0.2), g2 = values(12, 0.9), g3 = values(10, 1.7), g4 = values(6, 2.3);
  const ts::DTensor both = dtensor_with_grad(mesh, {ts::Shard(0), ts::Shard(1)}, {5, 6}, g1, mode);
  const ts::DTensor tp_only = dtensor_with_grad(mesh, {ts::Replicate(), ts::Shard(0)}, {3, 4}, g2, mode);
  const ts::DTensor dp_only = dtensor_with_grad(mesh, {ts::Shard(0), ts::Replicate()}, {10}, g3, mode);
  // A parameter on the tp sub-mesh (every rank's own tp group).
  const ts::DTensor sub = dtensor_with_grad(mesh["tp"], {ts::Shard(1)}, {2, 3}, g4, mode);
  for (double p : {2.0, kInf}) {
    CAPTURE(p);
    // max_norm above the total: only the norm is checked here, the gradients stay.
    const double expected_total = dense_norm({g1, g2, g3, g4}, p);
    CHECK(clip_grad_norm_({both, tp_only, dp_only, sub}, 1e9, p) ==
          doctest::Approx(expected_total).epsilon(1e-13));
  }
  const double expected_total = dense_norm({g1, g2, g3, g4}, 2.0);
  const ts::Tensor per_rank =
      clip_grad_norm_per_rank_(std::vector<ts::DTensor>{both, tp_only, dp_only, sub}, 1.0);
  REQUIRE(per_rank.is_local());
  for (int rank : per_rank.ranks())
    CHECK(per_rank.shard(rank).item().to_double() == doctest::Approx(expected_total).epsilon(1e-13));
  const double coef = coefficient(expected_total, 1.0);
  check_values(both.grad().full_tensor().reconcile(), scaled(g1, coef), 1e-13, "both");
  check_values(sub.grad().full_tensor().reconcile(), scaled(g4, coef), 1e-13, "sub");
}

TEST_CASE("a Partial gradient is reduced for the norm, and scaled where it is pending") {
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ClipValues xs = values(12, 0.6);
  ts::Tensor w_full, x_full;
  {
    auto off = mode.disable();
    w_full = ts::ones({4}, ts::kFloat64);
    x_full = plain(xs, {3, 4});
  }
  ts::DTensor w = ts::distribute_tensor(w_full, mesh, {ts::Replicate()});
  w.set_requires_grad(true);
  const ts::DTensor x = ts::distribute_tensor(x_full, mesh, {ts::Shard(0)});
  (x * w).sum().backward();
  REQUIRE(w.grad().placements()[0].is_partial());
  // d sum(x * w) / dw = the column sums of x.
  ClipValues expected_grad(4, 0.0);
  for (size_t k = 0; k < xs.size(); ++k) expected_grad[k % 4] += xs[k];
  const double expected_total = dense_norm({expected_grad}, 2.0);
  ts::CommCounter counter;
  const double total = clip_grad_norm_(std::vector<ts::nn::Parameter>{ts::nn::Parameter(w)}, 1.0);
  CHECK(total == doctest::Approx(expected_total).epsilon(1e-13));
  // One all_reduce of the gradient for the norm; the reduced copy is replicated, so its sum needs
  // nothing more.
  CHECK(counter.calls() == 1);
  CHECK(counter.calls("all_reduce") == 1);

  check_values(w.grad().full_tensor().reconcile(), scaled(expected_grad, coefficient(expected_total, 1.0)),
               1e-13, "w");
}

TEST_CASE("a parameter list mixing a Tensor and a DTensor, and the collectives it issues") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  const ClipValues g1 = values(8, 0.5), g2 = values(4, 1.3), g3 = values(3, 0.8);
  const ts::DTensor sharded = dtensor_with_grad(mesh, {ts::Shard(0), ts::Shard(1)}, {2, 4}, g1, mode);
  const ts::DTensor replicated = dtensor_with_grad(mesh, {ts::Replicate(), ts::Replicate()}, {4}, g2, mode);
  ts::Tensor dense;
  {
    auto off = mode.disable();
    dense = plain(ClipValues(3, 0.0), {3});
    dense.set_grad(plain(g3, {3}));
  }
  const std::vector<ts::nn::Parameter> params = {ts::nn::Parameter(dense), ts::nn::Parameter(sharded),
                                                 ts::nn::Parameter(replicated)};
  const double expected_total = dense_norm({g1, g2, g3}, 2.0);
  ts::CommCounter counter;
  const double total = clip_grad_norm_(params, 0.5);
  CHECK(total == doctest::Approx(expected_total).epsilon(1e-13));
  // One all_reduce of the 0-d float64 sum over each mesh dim the gradient is sharded on; nothing
  // for the replicated one or the plain tensor.
  CHECK(counter.calls() == 2);
  CHECK(counter.calls("all_reduce") == 2);
  std::vector<std::string> dims;
  for (const auto& entry : counter.entries()) {
    CHECK(entry.calls == 1);
    dims.push_back(entry.mesh_dim);
  }
  std::sort(dims.begin(), dims.end());
  CHECK(dims == std::vector<std::string>{"dp", "tp"});
  const double coef = coefficient(expected_total, 0.5);
  check_values(dense.grad(), scaled(g3, coef), 1e-13, "dense");
  check_values(sharded.grad().full_tensor().reconcile(), scaled(g1, coef), 1e-13, "sharded");
}

TEST_CASE("local tensors: each rank's norm is its own") {
  ts::LocalMode mode(3);
  ts::Tensor p = ts::zeros({2}, ts::kFloat64);  // a local tensor: one value per rank
  REQUIRE(p.is_local());
  const std::vector<ClipValues> per_rank_grads = {{3.0, 4.0}, {0.3, 0.4}, {6.0, 8.0}};
  std::vector<std::pair<int, ts::Tensor>> shards;
  {
    auto off = mode.disable();
    for (int r = 0; r < 3; ++r) shards.emplace_back(r, plain(per_rank_grads[static_cast<size_t>(r)], {2}));
  }
  p.set_grad(ts::local_tensor(ts::RankMap<ts::Tensor>(shards)));
  // The double overload cannot hold three totals: refused, nothing scaled.
  CHECK_THROWS_WITH_AS(
      clip_grad_norm_({p}, 1.0),
      doctest::Contains("clip_grad_norm_: the ranks' total norms differ (rank 0: 5, rank 1: 0.5"), ts::Error);
  CHECK(p.grad().shard(0).to_vector<double>() == ClipValues{3.0, 4.0});
  const ts::Tensor totals = clip_grad_norm_per_rank_(std::vector<ts::Tensor>{p}, 1.0);
  REQUIRE(totals.is_local());
  CHECK(totals.shard(0).item().to_double() == 5.0);
  CHECK(totals.shard(1).item().to_double() == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(totals.shard(2).item().to_double() == 10.0);
  check_values(p.grad().shard(0), scaled({3.0, 4.0}, coefficient(5.0, 1.0)), 1e-13, "rank 0");
  CHECK(p.grad().shard(1).to_vector<double>() == ClipValues{0.3, 0.4});  // 0.5 <= 1: untouched
  check_values(p.grad().shard(2), scaled({6.0, 8.0}, coefficient(10.0, 1.0)), 1e-13, "rank 2");
}

TEST_CASE("a non-finite total: an error with error_if_nonfinite, else scaled as PyTorch does") {
  for (double bad : {kInf, std::nan("")}) {
    CAPTURE(bad);
    ts::Tensor a = plain({0.0, 0.0}, {2});
    a.set_grad(plain({1.0, bad}, {2}));
    CHECK_THROWS_WITH_AS(clip_grad_norm_({a}, 1.0, 2.0, true),
                         doctest::Contains("clip_grad_norm_: the total norm of order 2 of the gradients is"),
                         ts::Error);
    CHECK(a.grad().to_vector<double>()[0] == 1.0);  // nothing scaled
    const double total = clip_grad_norm_({a}, 1.0);
    CHECK_FALSE(std::isfinite(total));
    // inf: coefficient 0 (1 * 0 = 0); nan: coefficient nan.
    const double first = a.grad().to_vector<double>()[0];
    if (std::isinf(bad)) {
      CHECK(first == 0.0);
    } else {
      CHECK(std::isnan(first));
    }
  }
}

TEST_CASE("clip_grad_norm_ errors name what was wrong") {
  ts::Tensor a = plain({1.0}, {1});
  a.set_grad(plain({1.0}, {1}));
  CHECK_THROWS_WITH_AS(
      clip_grad_norm_({a}, 1.0, 0.0),
      "clip_grad_norm_: norm_type is 0; expected a positive p (2 for the Euclidean norm) or INFINITY "
      "(the largest absolute value)",
      ts::Error);
  CHECK_THROWS_WITH_AS(clip_grad_norm_({a}, 1.0, -kInf), doctest::Contains("norm_type is -inf"), ts::Error);
  CHECK_THROWS_WITH_AS(clip_grad_norm_({a}, 1.0, std::nan("")), doctest::Contains("norm_type is nan"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(clip_grad_norm_({a}, -1.0), "clip_grad_norm_: max_norm is -1; expected max_norm >= 0",
                       ts::Error);
  CHECK_THROWS_WITH_AS(
      clip_grad_norm_(std::vector<ts::nn::Parameter>{ts::nn::Parameter(a), ts::nn::Parameter()}, 1.0),
      doctest::Contains("clip_grad_norm_: parameter 1 is undefined"), ts::Error);
  CHECK_THROWS_WITH_AS(clip_grad_norm_(std::vector<ts::Tensor>{ts::Tensor()}, 1.0),
                       doctest::Contains("parameter 0 is undefined"), ts::Error);
  CHECK(a.grad().to_vector<double>() == ClipValues{1.0});
}

TEST_CASE("a plain gradient beside per-rank totals that differ is refused, nothing scaled") {
  ts::LocalMode mode(2);
  ts::Tensor dense, q_grad0, q_grad1;
  {
    auto off = mode.disable();
    dense = plain({0.0}, {1});
    dense.set_grad(plain({1.0}, {1}));
    q_grad0 = plain({10.0}, {1});
    q_grad1 = plain({20.0}, {1});
  }
  ts::Tensor q = ts::zeros({1}, ts::kFloat64);
  q.set_grad(ts::local_tensor(ts::RankMap<ts::Tensor>({{0, q_grad0}, {1, q_grad1}})));
  CHECK_THROWS_WITH_AS(
      clip_grad_norm_per_rank_(std::vector<ts::Tensor>{q, dense}, 1.0),
      doctest::Contains("clip_grad_norm_: a plain-tensor gradient (one value for every rank) cannot be "
                        "scaled by the ranks' different coefficients"),
      ts::Error);
  CHECK(dense.grad().to_vector<double>() == ClipValues{1.0});
  CHECK(q.grad().shard(1).to_vector<double>() == ClipValues{20.0});
}
