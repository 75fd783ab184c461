// silu, gelu(approximate), sin, cos, rsqrt and clamp against values computed here with <cmath>.
#include <cmath>
#include <limits>
#include <vector>

#include "test_util.hpp"

namespace ts = tessera;

namespace {

const std::vector<double> kInputs = {-3.5, -1.25, -0.5, 0.0, 0.25, 1.0, 2.75, 6.0};

ts::Tensor f64(const std::vector<double>& v) { return ts::from_values(v, {static_cast<int64_t>(v.size())}); }

template <class F>
std::vector<double> each(const std::vector<double>& v, F f) {
  std::vector<double> out;
  for (double x : v) out.push_back(f(x));
  return out;
}

void check_close(const ts::Tensor& t, const std::vector<double>& expected, double tol = 1e-12) {
  const std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK_MESSAGE(std::abs(got[i] - expected[i]) <= tol, "index " << i);
}

}  // namespace

TEST_CASE("silu is x / (1 + exp(-x))") {
  check_close(ts::silu(f64(kInputs)), each(kInputs, [](double x) { return x / (1 + std::exp(-x)); }));
  CHECK(ts::silu(ts::tensor({1, 2})).dtype() == ts::kFloat32);  // integers compute as float32
}

TEST_CASE("gelu: approximate 'tanh' is the tanh formula, 'none' the exact erf form, anything else an error") {
  const ts::Tensor x = f64(kInputs);
  check_close(ts::gelu(x, "tanh"), each(kInputs, [](double v) {
                return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
              }));
  check_close(ts::gelu(x, "none"),
              each(kInputs, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }));
  // The two forms differ (by ~1e-4 near |x| = 2): the test would catch one standing in for the other.
  CHECK(std::abs(ts::gelu(x, "tanh").to_vector<double>()[6] - ts::gelu(x).to_vector<double>()[6]) > 1e-5);
  CHECK_THROWS_WITH_AS(ts::gelu(x, "exact"),
                       doctest::Contains("approximate is 'exact', expected 'none' or 'tanh'"), ts::Error);
}

TEST_CASE("sin and cos: float64, float32, integer input, non-contiguous, 0-d and empty") {
  check_close(ts::sin(f64(kInputs)), each(kInputs, [](double x) { return std::sin(x); }));
  check_close(ts::cos(f64(kInputs)), each(kInputs, [](double x) { return std::cos(x); }));
  const ts::Tensor f = ts::sin(f64(kInputs).to(ts::kFloat32));
  CHECK(f.dtype() == ts::kFloat32);
  check_close(f, each(kInputs, [](double x) { return static_cast<double>(std::sin(static_cast<float>(x))); }),
              1e-6);
  const ts::Tensor i = ts::cos(ts::tensor({0, 1, 2}));
  CHECK(i.dtype() == ts::kFloat32);
  check_close(i, {1.0, std::cos(1.0), std::cos(2.0)}, 1e-6);
  // A transposed [2,3]: element (j, i) of the view is m[i][j].
  const ts::Tensor m = ts::from_values(std::vector<double>{0, 1, 2, 3, 4, 5}, {2, 3});
  const ts::Tensor st = ts::sin(m.t());
  CHECK(st.sizes() == ts::Shape{3, 2});
  check_close(st, {std::sin(0), std::sin(3), std::sin(1), std::sin(4), std::sin(2), std::sin(5)});
  check_close(ts::cos(ts::scalar_tensor(0.5, ts::kFloat64)), {std::cos(0.5)});
  CHECK(ts::sin(ts::zeros({0, 3})).sizes() == ts::Shape{0, 3});
}

TEST_CASE("rsqrt is 1 / sqrt(x): inf at 0, NaN below") {
  const std::vector<double> v = {0.25, 1.0, 2.0, 100.0};
  check_close(ts::rsqrt(f64(v)), each(v, [](double x) { return 1 / std::sqrt(x); }));
  const std::vector<double> edge = ts::rsqrt(f64({0.0, -1.0})).to_vector<double>();
  CHECK(edge[0] == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(edge[1]));
}

TEST_CASE("clamp: both bounds, one bound, NaN passes, lo > hi gives hi, promotion with a float bound") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const ts::Tensor x = f64({-2, -1, 0, 1, 2, nan});
  const std::vector<double> both = ts::clamp(x, -1.5, 0.5).to_vector<double>();
  const std::vector<double> expected = {-1.5, -1, 0, 0.5, 0.5};
  for (size_t i = 0; i < expected.size(); ++i) CHECK(both[i] == expected[i]);
  CHECK(std::isnan(both[5]));
  CHECK(ts::clamp(x, std::nullopt, 0.0).to_vector<double>()[4] == 0.0);
  CHECK(ts::clamp(x, std::nullopt, 0.0).to_vector<double>()[0] == -2.0);
  CHECK(ts::clamp(x, 1.0, std::nullopt).to_vector<double>()[0] == 1.0);
  CHECK(ts::clamp(x, 1.0, std::nullopt).to_vector<double>()[4] == 2.0);
  // torch.clamp(x, min=1, max=0) is 0 everywhere (min first, then max).
  const std::vector<double> crossed = ts::clamp(f64({-5, 0.5, 5}), 1.0, 0.0).to_vector<double>();
  CHECK(crossed == std::vector<double>{0, 0, 0});
  // An int64 tensor with float bounds is float32, as torch.clamp promotes.
  const ts::Tensor i = ts::clamp(ts::tensor({-3, 0, 3}), -1.5, 2.5);
  CHECK(i.dtype() == ts::kFloat32);
  test::check_values<float>(i, {3}, {-1.5f, 0.f, 2.5f});
  const ts::Tensor ii = ts::clamp(ts::tensor({-3, 0, 3}), -1, 2);
  CHECK(ii.dtype() == ts::kInt64);
  test::check_values<int64_t>(ii, {3}, {-1, 0, 2});
  CHECK_THROWS_WITH_AS(ts::clamp(x, std::nullopt, std::nullopt),
                       doctest::Contains("at least one of lo and hi"), ts::Error);
}

TEST_CASE("free transpose and permute are the methods") {
  const ts::Tensor x = test::iota({2, 3, 4});
  CHECK(ts::equal(ts::transpose(x, 0, 2), x.transpose(0, 2)));
  CHECK(ts::transpose(x, 0, 2).sizes() == ts::Shape{4, 3, 2});
  CHECK(ts::permute(x, {1, 2, 0}).sizes() == ts::Shape{3, 4, 2});
  CHECK(ts::permute(x, {1, 2, 0}).to_vector<float>()[1] == 12.f);  // [0][0][1] of the view is x[1][0][0]
}
