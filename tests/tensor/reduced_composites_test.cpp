// Composite ops on bfloat16 and float16 compute in float32 and round once, as PyTorch does: every
// element of the result is within half a unit in the last place (of the reduced dtype) of the value
// computed exactly (in double, by loops here). Rounding after each step of the composite misses
// that bound on these inputs (checked below on the same values: the per-step chain is off).
#include <doctest/doctest.h>

#include <cmath>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

namespace {

// A unit in the last place of the reduced dtype at |value| (a normal number).
double ulp(double value, ts::DType dtype) {
  const int bits = dtype == ts::kBFloat16 ? 8 : 11;  // significand bits, the hidden one included
  if (value == 0) return 0;                          // ilogb(0) is INT_MIN; zero is exact
  return std::ldexp(1.0, std::ilogb(value) - (bits - 1));
}

void check_rounded_once(const ts::Tensor& got, const std::vector<double>& exact, const char* what) {
  const std::vector<double> g = got.to(ts::kFloat64).contiguous().to_vector<double>();
  REQUIRE(g.size() == exact.size());
  for (size_t i = 0; i < g.size(); ++i)
    CHECK_MESSAGE(std::abs(g[i] - exact[i]) <= 0.5 * ulp(exact[i], got.dtype()) * (1 + 1e-6),
                  what << " " << ts::dtype_name(got.dtype()) << " index " << i << ": got " << g[i]
                       << ", exact " << exact[i]);
}

// Row values whose squares and means fall between representable values.
std::vector<double> inputs(int64_t rows, int64_t cols) {
  std::vector<double> v;
  for (int64_t i = 0; i < rows * cols; ++i)
    v.push_back(0.71 + 0.173 * static_cast<double>((i * 7) % 11) - 0.09 * static_cast<double>(i % 3));
  return v;
}

}  // namespace

TEST_CASE("rms_norm and layer_norm on bf16/fp16 round once, rms_norm's default eps is the dtype's") {
  constexpr int64_t R = 3, C = 8;
  const std::vector<double> x = inputs(R, C);
  for (const ts::DType dtype : {ts::kBFloat16, ts::kFloat16}) {
    // The inputs as the reduced dtype holds them (the exact computation starts from those values).
    const ts::Tensor xr = ts::from_values(x, {R, C}, ts::kFloat64).to(dtype);
    const std::vector<double> held = xr.to(ts::kFloat64).to_vector<double>();
    const double eps = dtype == ts::kBFloat16 ? 0.0078125 : 0.0009765625;
    std::vector<double> rms(held.size()), ln(held.size());
    for (int64_t r = 0; r < R; ++r) {
      double sq = 0, sum = 0;
      for (int64_t c = 0; c < C; ++c) {
        const double v = held[static_cast<size_t>(r * C + c)];
        sq += v * v;
        sum += v;
      }
      const double mean = sum / C;
      double var = 0;
      for (int64_t c = 0; c < C; ++c) var += std::pow(held[static_cast<size_t>(r * C + c)] - mean, 2);
      var /= C;
      for (int64_t c = 0; c < C; ++c) {
        const size_t i = static_cast<size_t>(r * C + c);
        rms[i] = held[i] / std::sqrt(sq / C + eps);
        ln[i] = (held[i] - mean) / std::sqrt(var + 1e-5);
      }
    }
    const ts::Tensor got_rms = ts::rms_norm(xr, {C});
    CHECK(got_rms.dtype() == dtype);
    check_rounded_once(got_rms, rms, "rms_norm");
    check_rounded_once(ts::layer_norm(xr, {C}), ln, "layer_norm");
  }
}

TEST_CASE("silu, gelu(tanh) and attention on bf16 round once") {
  constexpr int64_t L = 4, E = 8;
  const std::vector<double> x = inputs(L, E);
  for (const ts::DType dtype : {ts::kBFloat16, ts::kFloat16}) {
    const ts::Tensor xr = ts::from_values(x, {L, E}, ts::kFloat64).to(dtype);
    const std::vector<double> held = xr.to(ts::kFloat64).to_vector<double>();
    std::vector<double> silu, gelu;
    for (double v : held) {
      silu.push_back(v / (1 + std::exp(-v)));
      gelu.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
    }
    check_rounded_once(ts::silu(xr), silu, "silu");
    check_rounded_once(ts::gelu(xr, "tanh"), gelu, "gelu tanh");

    // Causal self-attention of x with itself (q = k = v), one head.
    std::vector<double> attn(held.size(), 0.0);
    const double scale = 1 / std::sqrt(static_cast<double>(E));
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> w;
      double top = -INFINITY, total = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double s = 0;
        for (int64_t e = 0; e < E; ++e)
          s += held[static_cast<size_t>(i * E + e)] * held[static_cast<size_t>(j * E + e)];
        w.push_back(s * scale);
        top = std::max(top, s * scale);
      }
      for (double& s : w) total += (s = std::exp(s - top));
      for (int64_t j = 0; j <= i; ++j)
        for (int64_t e = 0; e < E; ++e)
          attn[static_cast<size_t>(i * E + e)] +=
              w[static_cast<size_t>(j)] / total * held[static_cast<size_t>(j * E + e)];
    }
    check_rounded_once(ts::scaled_dot_product_attention(xr, xr, xr, {}, 0.0, true), attn, "attention");
  }
}

TEST_CASE("the same chain rounded after every op misses the bound on these inputs (the test can fail)") {
  constexpr int64_t R = 3, C = 8;
  const ts::Tensor xr = ts::from_values(inputs(R, C), {R, C}, ts::kFloat64).to(ts::kBFloat16);
  const std::vector<double> held = xr.to(ts::kFloat64).to_vector<double>();
  // rms_norm written as bf16 ops, each rounding its result.
  const ts::Tensor stepwise = xr * ts::rsqrt(ts::mean(xr * xr, {1}, true) + 0.0078125);
  const std::vector<double> got = stepwise.to(ts::kFloat64).to_vector<double>();
  int misses = 0;
  for (int64_t r = 0; r < R; ++r) {
    double sq = 0;
    for (int64_t c = 0; c < C; ++c) sq += std::pow(held[static_cast<size_t>(r * C + c)], 2);
    for (int64_t c = 0; c < C; ++c) {
      const size_t i = static_cast<size_t>(r * C + c);
      const double exact = held[i] / std::sqrt(sq / C + 0.0078125);
      if (std::abs(got[i] - exact) > 0.5 * ulp(exact, ts::kBFloat16) * (1 + 1e-6)) ++misses;
    }
  }
  CHECK(misses > 0);
}
