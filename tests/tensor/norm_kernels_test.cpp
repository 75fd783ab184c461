// The fused layer_norm / rms_norm kernels (sdk/KERNELS.md, "Normalisation") through ts::layer_norm
// and ts::rms_norm: their bits against the documented summation order written out here (sixteen
// lanes, then a fixed tree), whatever the thread count, the row layout and the vector clone; their
// gradients against float64 loops of the formulas; bfloat16 rounded once at the output; empty
// tensors; and bad direct kernel calls refused with messages naming the operand.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tensor/kernel_operand.hpp"
#include "kernel_threads.hpp"
#include "test_util.hpp"

namespace ts = tessera;
namespace dispatch = tessera::dispatch;

namespace {

// KERNELS.md's S: lane l adds terms l, l + 16, ... from +0, then lane l += lane l + w, w = 8..1.
template <class C>
C documented_sum(const std::vector<C>& terms) {
  C lanes[16] = {};
  for (size_t i = 0; i < terms.size(); ++i) lanes[i % 16] += terms[i];
  for (int w = 8; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  return lanes[0];
}

// One row normalised as the table says, in the compute type C.
template <class C>
std::vector<C> documented_row(const std::vector<C>& x, const std::vector<C>& w, const std::vector<C>& b,
                              C eps, bool rms) {
  const size_t n = x.size();
  const C count = static_cast<C>(n);
  C mean = 0;
  std::vector<C> terms(n);
  if (!rms) mean = documented_sum(x) / count;
  for (size_t j = 0; j < n; ++j) terms[j] = (x[j] - mean) * (x[j] - mean);
  const C rstd = C(1) / std::sqrt(documented_sum(terms) / count + eps);
  std::vector<C> y(n);
  for (size_t j = 0; j < n; ++j) {
    C v = (rms ? x[j] : x[j] - mean) * rstd;
    if (!w.empty()) v = v * w[j];
    if (!b.empty()) v = v + b[j];
    y[j] = v;
  }
  return y;
}

template <class C>
std::vector<C> some_values(size_t n, uint32_t seed, double scale = 3.0) {
  std::vector<C> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<C>(scale * std::sin(0.37 * static_cast<double>(i * 7 + seed)) +
                          0.25 * static_cast<double>(seed % 3));
  return v;
}

template <class C>
std::vector<C> slice(const std::vector<C>& v, size_t first, size_t count) {
  return std::vector<C>(v.begin() + static_cast<ptrdiff_t>(first),
                        v.begin() + static_cast<ptrdiff_t>(first + count));
}

template <class C>
bool same_bits(const std::vector<C>& a, const std::vector<C>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(C)) == 0;
}

// float32 -> bfloat16 bits -> float32, rounding to nearest even (finite inputs).
float round_to_bfloat16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  float y;
  std::memcpy(&y, &bits, sizeof y);
  return y;
}

// The fused op on [rows, n] values against documented_row, bit for bit, every combination of
// weight and bias.
template <class C>
void check_documented_bits(ts::DType dtype, size_t rows, size_t n, bool rms) {
  const std::vector<C> x = some_values<C>(rows * n, static_cast<uint32_t>(n)), w = some_values<C>(n, 5, 1.0),
                       b = some_values<C>(n, 9, 0.5);
  const ts::TensorOptions opts(dtype);
  const ts::Tensor xt = ts::from_values(x, {static_cast<int64_t>(rows), static_cast<int64_t>(n)}, opts);
  const ts::Tensor wt = ts::from_values(w, {static_cast<int64_t>(n)}, opts);
  const ts::Tensor bt = ts::from_values(b, {static_cast<int64_t>(n)}, opts);
  const C eps = static_cast<C>(1e-5);
  for (int with = 0; with < (rms ? 2 : 4); ++with) {
    const bool has_w = (with & 1) != 0, has_b = (with & 2) != 0;
    CAPTURE(n);
    CAPTURE(has_w);
    CAPTURE(has_b);
    const ts::Tensor got = rms ? ts::rms_norm(xt, {static_cast<int64_t>(n)}, has_w ? wt : ts::Tensor(), 1e-5)
                               : ts::layer_norm(xt, {static_cast<int64_t>(n)}, has_w ? wt : ts::Tensor(),
                                                has_b ? bt : ts::Tensor(), 1e-5);
    std::vector<C> expected;
    for (size_t r = 0; r < rows; ++r) {
      const std::vector<C> y = documented_row(slice(x, r * n, n), has_w ? w : std::vector<C>{},
                                              has_b ? b : std::vector<C>{}, eps, rms);
      expected.insert(expected.end(), y.begin(), y.end());
    }
    CHECK(same_bits(got.to_vector<C>(), expected));
  }
}

const std::vector<size_t> kRowLengths = {1, 2, 7, 15, 16, 17, 31, 33, 64, 100, 257, 1031};

}  // namespace

TEST_CASE("fused norms give the bits of the documented summation order, float32 and float64") {
  for (size_t n : kRowLengths) {
    check_documented_bits<float>(ts::kFloat32, 3, n, false);
    check_documented_bits<float>(ts::kFloat32, 3, n, true);
    check_documented_bits<double>(ts::kFloat64, 2, n, false);
    check_documented_bits<double>(ts::kFloat64, 2, n, true);
  }
}

TEST_CASE("fused norms on bfloat16 compute in float32 and round once at the output") {
  for (size_t n : {5, 16, 48, 300}) {
    CAPTURE(n);
    std::vector<float> x = some_values<float>(4 * n, 3);
    for (float& v : x) v = round_to_bfloat16(v);  // values a bfloat16 holds exactly
    std::vector<float> w = some_values<float>(n, 4, 1.0), b = some_values<float>(n, 8, 0.5);
    const ts::Tensor xb = ts::from_values(x, {4, static_cast<int64_t>(n)}).to(ts::kBFloat16);
    // Weight and bias stay float32 (the compute type): no rounding of the parameters.
    const ts::Tensor wt = ts::from_values(w, {static_cast<int64_t>(n)}),
                     bt = ts::from_values(b, {static_cast<int64_t>(n)});
    const std::vector<float> got =
        ts::layer_norm(xb, {static_cast<int64_t>(n)}, wt, bt, 1e-5).to_vector<float>();
    const std::vector<float> got_rms =
        ts::rms_norm(xb, {static_cast<int64_t>(n)}, wt, 1e-5).to_vector<float>();
    std::vector<float> expected, expected_rms;
    for (size_t r = 0; r < 4; ++r) {
      for (float v : documented_row(slice(x, r * n, n), w, b, 1e-5f, false))
        expected.push_back(round_to_bfloat16(v));
      for (float v : documented_row(slice(x, r * n, n), w, {}, 1e-5f, true))
        expected_rms.push_back(round_to_bfloat16(v));
    }
    CHECK(same_bits(got, expected));
    CHECK(same_bits(got_rms, expected_rms));
    // float16: the float32 result rounded once.
    const ts::Tensor xh = xb.to(ts::kFloat16);
    CHECK(ts::equal(
        ts::layer_norm(xh, {static_cast<int64_t>(n)}, wt, bt, 1e-5),
        ts::layer_norm(xh.to(ts::kFloat32), {static_cast<int64_t>(n)}, wt, bt, 1e-5).to(ts::kFloat16)));
  }
}

TEST_CASE("fused norms: the same bits for every thread count and row layout") {
  // 64 rows of 4099 elements: several tasks of rows, and a tail after the 16-lane body.
  const int64_t rows = 64, n = 4099;
  const ts::Tensor base = ts::from_values(some_values<float>(static_cast<size_t>(rows * n), 1), {n, rows});
  const ts::Tensor strided = base.t();  // [rows, n], elements `rows` apart within a row
  const ts::Tensor dense = strided.contiguous();
  const ts::Tensor w = ts::from_values(some_values<float>(static_cast<size_t>(n), 2, 1.0), {n});
  std::vector<float> one_thread, rms_one_thread;
  {
    test::KernelThreads threads(1);
    one_thread = ts::layer_norm(dense, {n}, w, w, 1e-5).to_vector<float>();
    rms_one_thread = ts::rms_norm(dense, {n}, w, 1e-5).to_vector<float>();
  }
  for (int count : {2, 3, 8}) {
    CAPTURE(count);
    test::KernelThreads threads(count);
    CHECK(same_bits(ts::layer_norm(dense, {n}, w, w, 1e-5).to_vector<float>(), one_thread));
    CHECK(same_bits(ts::rms_norm(dense, {n}, w, 1e-5).to_vector<float>(), rms_one_thread));
  }
  // The strided rows run the kernels' baseline loop, the dense rows the widest vector clone.
  CHECK(same_bits(ts::layer_norm(strided, {n}, w, w, 1e-5).to_vector<float>(), one_thread));
  CHECK(same_bits(ts::rms_norm(strided, {n}, w, 1e-5).to_vector<float>(), rms_one_thread));
}

TEST_CASE("fused norm gradients against float64 loops of the formulas") {
  const int64_t rows = 3, n = 37;
  const std::vector<double> x = some_values<double>(static_cast<size_t>(rows * n), 6),
                            w = some_values<double>(static_cast<size_t>(n), 7, 1.0),
                            b = some_values<double>(static_cast<size_t>(n), 11, 0.5),
                            g = some_values<double>(static_cast<size_t>(rows * n), 13, 2.0);
  for (bool rms : {false, true}) {
    CAPTURE(rms);
    // float32 tensors; the loops run in float64 with plain left-to-right sums.
    ts::Tensor xt = ts::from_values(x, {rows, n}).to(ts::kFloat32).requires_grad_(true);
    ts::Tensor wt = ts::from_values(w, {n}).to(ts::kFloat32).requires_grad_(true);
    ts::Tensor bt = ts::from_values(b, {n}).to(ts::kFloat32).requires_grad_(true);
    const ts::Tensor y = rms ? ts::rms_norm(xt, {n}, wt, 1e-5) : ts::layer_norm(xt, {n}, wt, bt, 1e-5);
    (y * ts::from_values(g, {rows, n}).to(ts::kFloat32)).sum().backward();
    std::vector<double> gx(x.size()), gw(w.size(), 0.0), gb(b.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const double* xr = x.data() + r * n;
      const double* gr = g.data() + r * n;
      double mean = 0, var = 0;
      for (int64_t j = 0; j < n; ++j) mean += xr[j];
      mean = rms ? 0 : mean / static_cast<double>(n);
      for (int64_t j = 0; j < n; ++j) var += (xr[j] - mean) * (xr[j] - mean);
      const double rstd = 1 / std::sqrt(var / static_cast<double>(n) + 1e-5);
      // d/dx_k of y_j = xhat_j w_j (+ b_j), through mean (layer_norm only) and rstd.
      for (int64_t k = 0; k < n; ++k) {
        double sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          const double xhat_j = (xr[j] - mean) * rstd;
          const double dxhat = rstd * ((j == k ? 1.0 : 0.0) - (rms ? 0.0 : 1.0 / static_cast<double>(n))) -
                               xhat_j * rstd * rstd * (xr[k] - mean) / static_cast<double>(n);
          sum += gr[j] * w[static_cast<size_t>(j)] * dxhat;
        }
        gx[static_cast<size_t>(r * n + k)] = sum;
        gw[static_cast<size_t>(k)] += gr[k] * (xr[k] - mean) * rstd;
        gb[static_cast<size_t>(k)] += gr[k];
      }
    }
    auto check = [](const ts::Tensor& t, const std::vector<double>& want) {
      const std::vector<double> got = t.to_vector<double>();
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i)
        CHECK_MESSAGE(std::abs(got[i] - want[i]) <= 2e-4 * (1 + std::abs(want[i])), "index " << i);
    };
    check(xt.grad(), gx);
    check(wt.grad(), gw);
    if (!rms) check(bt.grad(), gb);
    CHECK(wt.grad().dtype() == ts::kFloat32);
  }
}

TEST_CASE("fused norm gradients of bfloat16 inputs and parameters come back in bfloat16") {
  ts::Tensor x = ts::from_values(some_values<float>(24, 1), {4, 6}).to(ts::kBFloat16).requires_grad_(true);
  ts::Tensor w = ts::ones({6}).to(ts::kBFloat16).requires_grad_(true);
  ts::Tensor b = ts::zeros({6}).to(ts::kBFloat16).requires_grad_(true);
  ts::layer_norm(x, {6}, w, b).sum().backward();
  CHECK(x.grad().dtype() == ts::kBFloat16);
  CHECK(w.grad().dtype() == ts::kBFloat16);
  CHECK(b.grad().dtype() == ts::kBFloat16);
  // The bias's gradient is the rows' count of ones; the input's, for a sum of a normalised row with
  // unit weight, is zero up to rounding.
  CHECK(b.grad().to_vector<float>() == std::vector<float>(6, 4.0f));
  for (float v : x.grad().to_vector<float>()) CHECK(std::abs(v) < 1e-2f);
}

TEST_CASE("fused norms of empty tensors: no rows, or rows of no elements") {
  const ts::Tensor none = ts::zeros({0, 4});
  CHECK(ts::layer_norm(none, {4}, ts::ones({4}), ts::zeros({4})).sizes() == ts::Shape{0, 4});
  CHECK(ts::rms_norm(none, {4}, ts::ones({4}), 1e-5).sizes() == ts::Shape{0, 4});
  const ts::Tensor empty_rows = ts::zeros({3, 0});
  CHECK(ts::layer_norm(empty_rows, {0}).sizes() == ts::Shape{3, 0});
  ts::Tensor x = ts::zeros({0, 5}).requires_grad_(true);
  ts::Tensor w = ts::ones({5}).requires_grad_(true);
  ts::rms_norm(x, {5}, w, 1e-5).sum().backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>(5, 0.0f));
}

namespace {

std::string kernel_failure(const std::function<void()>& call) {
  try {
    call();
  } catch (const ts::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("bad calls of the norm kernels are refused naming the operand and what was expected") {
  const ts::Tensor x = ts::ones({2, 4}), w = ts::ones({4}), w3 = ts::ones({3}), out = ts::empty({2, 4});
  const ts::Tensor stats = ts::empty({2}), stats64 = ts::empty({2}, ts::TensorOptions(ts::kFloat64));
  auto op = [](const ts::Tensor& t) { return dispatch::operand(*t.impl()); };
  auto eps = dispatch::Attr::real("eps", 1e-5);
  auto flag = [](const char* name, int64_t v) { return dispatch::Attr::integer(name, v); };
  auto has = [&](const std::string& message, const std::string& part) {
    CAPTURE(message);
    CHECK(message.find(part) != std::string::npos);
  };
  has(kernel_failure([&] {
        dispatch::call_kernel("rms_norm", ts::kFloat32, {op(x)}, {op(out), op(stats)},
                              {eps, flag("has_weight", 2)});
      }),
      "rms_norm: attribute 'has_weight' is 2, expected 0 or 1");
  has(kernel_failure([&] {
        dispatch::call_kernel("rms_norm", ts::kFloat32, {op(x)}, {op(out), op(stats)},
                              {eps, flag("has_weight", 1)});
      }),
      "rms_norm: got 1 inputs and 2 outputs, expected 2 and 2");
  has(kernel_failure([&] {
        dispatch::call_kernel("layer_norm", ts::kFloat32, {op(x), op(w3)}, {op(out), op(stats), op(stats)},
                              {eps, flag("has_weight", 1), flag("has_bias", 0)});
      }),
      "layer_norm: input weight has shape [3], expected size 4 in dim 0 (the row length of x)");
  has(kernel_failure([&] {
        dispatch::call_kernel("layer_norm", ts::kFloat32, {op(x)}, {op(out), op(stats64), op(stats)},
                              {eps, flag("has_weight", 0), flag("has_bias", 0)});
      }),
      "layer_norm: output mean has dtype float64, expected float32");
  has(kernel_failure([&] {
        dispatch::call_kernel("layer_norm", ts::kFloat32, {op(x.reshape({2, 2, 2}))},
                              {op(out.reshape({2, 2, 2})), op(stats), op(stats)},
                              {eps, flag("has_weight", 0), flag("has_bias", 0)});
      }),
      "layer_norm: input x has shape [2, 2, 2], expected 2 dims [rows, length]");
  has(kernel_failure([&] {
        dispatch::call_kernel("rms_norm", ts::kFloat32, {op(x)}, {op(out), op(stats)},
                              {dispatch::Attr::real("eps", -1.0), flag("has_weight", 0)});
      }),
      "rms_norm: attribute 'eps' is -1.000000, expected a number >= 0");
  has(kernel_failure([&] {
        dispatch::call_kernel("rms_norm_backward", ts::kFloat32, {op(x), op(x), op(stats)},
                              {op(ts::empty({2, 3}))}, {flag("has_weight", 0)});
      }),
      "rms_norm_backward: output grad_x has shape [2, 3], expected [2, 4] (the shape of input x)");
  has(kernel_failure([&] {
        dispatch::call_kernel("layer_norm", ts::kFloat32, {op(x)}, {op(out), op(stats), op(stats)},
                              {flag("has_weight", 0), flag("has_bias", 0)});
      }),
      "layer_norm: kernel attribute 'eps' is missing");
}

TEST_CASE("a negative or NaN eps is refused by the ops, whichever path computes them") {
  const ts::Tensor x = ts::ones({2, 4});
  CHECK(kernel_failure([&] {
          (void)ts::layer_norm(x, {4}, ts::Tensor(), ts::Tensor(), -1e-5);
        }).find("layer_norm: eps is -1e-05, expected a number >= 0") != std::string::npos);
  CHECK(kernel_failure([&] {
          (void)ts::rms_norm(x, {4}, ts::Tensor(), std::nan(""));
        }).find("rms_norm: eps is nan, expected a number >= 0") != std::string::npos);
}
