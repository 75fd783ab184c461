// layer_norm and rms_norm against loops written from their definitions (biased variance; eps
// inside the square root), on dense and local tensors.
#include <cmath>
#include <limits>
#include <vector>

#include "test_util.hpp"

namespace ts = tessera;

namespace {

std::vector<double> values(int64_t n, double scale) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(scale * std::sin(1.7 * static_cast<double>(i) + 0.3) + 0.1 * static_cast<double>(i % 5));
  return v;
}

// Normalises each block of `group` consecutive values; weight and bias per element of the group
// (empty: none). rms: no centring, mean square instead of variance.
std::vector<double> norm_loop(const std::vector<double>& x, size_t group, const std::vector<double>& w,
                              const std::vector<double>& b, double eps, bool rms) {
  std::vector<double> out(x.size());
  for (size_t start = 0; start < x.size(); start += group) {
    double mean = 0;
    for (size_t j = 0; j < group; ++j) mean += x[start + j];
    mean = rms ? 0 : mean / static_cast<double>(group);
    double sq = 0;
    for (size_t j = 0; j < group; ++j) sq += (x[start + j] - mean) * (x[start + j] - mean);
    const double scale = 1 / std::sqrt(sq / static_cast<double>(group) + eps);
    for (size_t j = 0; j < group; ++j)
      out[start + j] = (x[start + j] - mean) * scale * (w.empty() ? 1 : w[j]) + (b.empty() ? 0 : b[j]);
  }
  return out;
}

void check_close(const ts::Tensor& t, const std::vector<double>& expected, double tol = 1e-12) {
  const std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK_MESSAGE(std::abs(got[i] - expected[i]) <= tol, "index " << i);
}

ts::Tensor f64(const std::vector<double>& v, const ts::Shape& shape) { return ts::from_values(v, shape); }

}  // namespace

TEST_CASE("layer_norm over the last dim and the last two, with and without weight and bias") {
  const std::vector<double> x = values(24, 2.0);
  const std::vector<double> w4 = {0.5, -1.0, 2.0, 1.5}, b4 = {0.1, 0.2, -0.3, 0.0};
  const ts::Tensor t = f64(x, {2, 3, 4});
  check_close(ts::layer_norm(t, {4}), norm_loop(x, 4, {}, {}, 1e-5, false));
  check_close(ts::layer_norm(t, {4}, f64(w4, {4}), f64(b4, {4})), norm_loop(x, 4, w4, b4, 1e-5, false));
  check_close(ts::layer_norm(t, {4}, f64(w4, {4})), norm_loop(x, 4, w4, {}, 1e-5, false));
  check_close(ts::layer_norm(t, {4}, ts::Tensor(), f64(b4, {4}), 0.25), norm_loop(x, 4, {}, b4, 0.25, false));
  const std::vector<double> w12 = values(12, 1.0);
  check_close(ts::layer_norm(t, {3, 4}, f64(w12, {3, 4})), norm_loop(x, 12, w12, {}, 1e-5, false));
  // A non-contiguous input: the transposed tensor's rows are columns of the original.
  const ts::Tensor tt = f64(x, {6, 4}).t();  // [4,6]
  check_close(ts::layer_norm(tt, {6}),
              norm_loop(tt.contiguous().to_vector<double>(), 6, {}, {}, 1e-5, false));
  // float32 stays float32; no rows give no rows.
  CHECK(ts::layer_norm(t.to(ts::kFloat32), {4}).dtype() == ts::kFloat32);
  CHECK(ts::layer_norm(ts::zeros({0, 4}), {4}, ts::ones({4}), ts::ones({4})).sizes() == ts::Shape{0, 4});
  CHECK(ts::rms_norm(ts::zeros({2, 0, 4}), {4}).sizes() == ts::Shape{2, 0, 4});
}

TEST_CASE("rms_norm: given eps, and by default the dtype's machine epsilon") {
  const std::vector<double> x = values(12, 3.0);
  const std::vector<double> w = {2.0, 0.5, -1.0};
  check_close(ts::rms_norm(f64(x, {4, 3}), {3}, f64(w, {3}), 1e-5), norm_loop(x, 3, w, {}, 1e-5, true));
  check_close(ts::rms_norm(f64(x, {4, 3}), {4, 3}),
              norm_loop(x, 12, {}, {}, std::numeric_limits<double>::epsilon(), true));
  // Where eps dominates (mean square 1e-8 next to float32's epsilon 1.19e-7) the default shows.
  const ts::Tensor tiny = ts::full({1, 4}, 1e-4, ts::kFloat32);
  const double expected = 1e-4 / std::sqrt(1e-8 + static_cast<double>(std::numeric_limits<float>::epsilon()));
  for (float v : ts::rms_norm(tiny, {4}).to_vector<float>())
    CHECK(v == doctest::Approx(expected).epsilon(1e-5));
  const double expected_f64 = 1e-4 / std::sqrt(1e-8 + std::numeric_limits<double>::epsilon());
  for (double v : ts::rms_norm(tiny.to(ts::kFloat64), {4}).to_vector<double>())
    CHECK(v == doctest::Approx(expected_f64).epsilon(1e-12));
}

TEST_CASE("norms: wrong shapes and dtypes are errors naming both shapes") {
  const ts::Tensor x = ts::zeros({2, 3});
  CHECK_THROWS_WITH_AS(ts::layer_norm(x, {2}),
                       doctest::Contains("normalized_shape is [2], expected the input's trailing dims to be "
                                         "that, but the input has shape [2, 3]"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(
      ts::layer_norm(x, {3}, ts::ones({4})),
      doctest::Contains("layer_norm: the weight has shape [4], expected normalized_shape [3]"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::layer_norm(x, {3}, ts::Tensor(), ts::ones({1, 3})),
                       doctest::Contains("the bias has shape [1, 3], expected normalized_shape [3]"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::rms_norm(x, {}), doctest::Contains("normalized_shape is empty"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::rms_norm(ts::zeros({2, 3}, ts::kInt64), {3}),
                       doctest::Contains("the input has dtype int64, expected a floating dtype"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::rms_norm(x, {2, 3, 1}), doctest::Contains("but the input has shape [2, 3]"),
                       ts::Error);
}

TEST_CASE("norms on a local tensor: each rank's rows, of uneven counts, normalised on their own") {
  const std::vector<double> a = values(8, 1.0), b = values(12, -2.0);
  ts::RankMap<ts::Tensor> shards;
  shards.set(0, f64(a, {2, 4}));
  shards.set(1, f64(b, {3, 4}));
  const ts::Tensor local = ts::local_tensor(std::move(shards));
  const std::vector<double> w = {1.0, 2.0, 3.0, 4.0};
  const ts::Tensor out = ts::layer_norm(local, {4}, f64(w, {4}));
  REQUIRE(out.is_local());
  check_close(out.shard(0), norm_loop(a, 4, w, {}, 1e-5, false));
  check_close(out.shard(1), norm_loop(b, 4, w, {}, 1e-5, false));
  const ts::Tensor r = ts::rms_norm(local, {4}, ts::Tensor(), 1e-6);
  check_close(r.shard(0), norm_loop(a, 4, {}, {}, 1e-6, true));
  check_close(r.shard(1), norm_loop(b, 4, {}, {}, 1e-6, true));
}
