// The normal transform of sdk/cpp/counter_rng.hpp: golden values from an independent reference
// (tests/sdk/counter_rng_reference.py: the exact value by mpmath, and the specified algorithm
// re-implemented in Python), the accuracy of its log and cos/sin against long-double libm over
// exhaustive (float32) and dense (float64) sweeps, extreme uniforms, blocks that start at any
// counter, and the statistics of a million samples.
// Compiled with -ffp-contract=off (tests/sdk/CMakeLists.txt), as the header requires.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <vector>

#include <doctest/doctest.h>

#include "tessera/sdk/cpp/counter_rng.hpp"
#include "tessera/tessera.hpp"

namespace rng = tessera::sdk::counter_rng;

namespace {

constexpr long double kPi = std::numbers::pi_v<long double>;

// |value - reference| in units in the last place of `reference` in a format with `digits`
// significand bits (24: float32, 53: float64).
long double ulps(long double value, long double reference, int digits) {
  if (reference == 0) return value == 0 ? 0 : INFINITY;
  return std::fabs(value - reference) / std::ldexp(1.0L, std::ilogb(reference) - (digits - 1));
}

uint32_t float_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// cos and sin of 2 pi k / 2^bits in long double. The quarter turns are taken off exactly with
// integers (an identity, not an approximation), so the reference stays accurate near the zeros.
void reference_turn(uint64_t k, int bits, long double& c, long double& s) {
  const uint64_t quarter = uint64_t{1} << (bits - 2);
  const uint64_t q = ((k + quarter / 2) / quarter) & 3;
  const long double j =
      static_cast<long double>(static_cast<int64_t>(k - ((k + quarter / 2) / quarter) * quarter));
  const long double t = 2 * kPi * j / std::ldexp(1.0L, bits);
  const long double ct = std::cos(t), st = std::sin(t);
  const long double table_c[4] = {ct, -st, -ct, st}, table_s[4] = {st, ct, -st, -ct};
  c = table_c[q];
  s = table_s[q];
}

long double reference_neg2_log(uint64_t k1, int bits) {
  return -2 * std::log(static_cast<long double>(k1 + 1) / std::ldexp(1.0L, bits));
}

struct Golden {
  uint64_t seed, counter;
  float exact32;         // the exact normal from the 24-bit uniforms, rounded to float32
  uint32_t algorithm32;  // the bits the algorithm specifies (float32 path)
  double exact64;        // the exact normal from the 53-bit uniforms, rounded to float64
  double algorithm64;    // what the algorithm specifies (float64 path)
};

// Printed by tests/sdk/counter_rng_reference.py.
constexpr Golden kGolden[] = {
    {42ull, 0ull, 0x1.7f90aa0000000p-2f, 0x3EBFC855u, 0x1.7f909d48575bep-2, 0x1.7f909d48575bep-2},
    {42ull, 1ull, 0x1.b98ccc0000000p-1f, 0x3F5CC665u, 0x1.b98cd11d59b49p-1, 0x1.b98cd11d59b49p-1},
    {42ull, 2ull, 0x1.f3c4260000000p+0f, 0x3FF9E214u, 0x1.f3c4289b0207cp+0, 0x1.f3c4289b0207dp+0},
    {42ull, 3ull, 0x1.37cb300000000p-4f, 0x3D9BE598u, 0x1.37cbf0bf073cep-4, 0x1.37cbf0bf073cep-4},
    {42ull, 4ull, 0x1.ed9c540000000p-1f, 0x3F76CE2Au, 0x1.ed9c5296a689cp-1, 0x1.ed9c5296a689bp-1},
    {42ull, 5ull, 0x1.09deac0000000p-1f, 0x3F04EF56u, 0x1.09deaee90a117p-1, 0x1.09deaee90a116p-1},
    {42ull, 6ull, 0x1.90934c0000000p-1f, 0x3F4849A6u, 0x1.90934f065168ap-1, 0x1.90934f065168bp-1},
    {42ull, 7ull, -0x1.3c523a0000000p-1f, 0xBF1E291Du, -0x1.3c52399f816c4p-1, -0x1.3c52399f816c3p-1},
    {0ull, 0ull, 0x1.23afb80000000p-1f, 0x3F11D7DDu, 0x1.23afbffffca6cp-1, 0x1.23afbffffca6bp-1},
    {0ull, 1ull, -0x1.f16fa80000000p-1f, 0xBF78B7D5u, -0x1.f16fa541e95bep-1, -0x1.f16fa541e95bdp-1},
    {7ull, 1000001ull, -0x1.37ec8c0000000p-1f, 0xBF1BF646u, -0x1.37ec8a9134895p-1, -0x1.37ec8a9134895p-1},
    {18446744073709551615ull, 1099511627779ull, -0x1.2a94aa0000000p-1f, 0xBF154A54u, -0x1.2a94a8b1ccaedp-1,
     -0x1.2a94a8b1ccaedp-1},
};

}  // namespace

TEST_CASE("normal values match the independent reference") {
  for (const Golden& g : kGolden) {
    CAPTURE(g.seed);
    CAPTURE(g.counter);
    const float x32 = rng::normal_f32(g.seed, g.counter);
    CHECK(float_bits(x32) == g.algorithm32);
    CHECK(ulps(x32, g.exact32, 24) <= 2);
    const double x64 = rng::normal(g.seed, g.counter);
    CHECK(x64 == g.algorithm64);
    CHECK(ulps(x64, g.exact64, 53) <= 4);
  }
}

TEST_CASE("float32 log and cos/sin are within 2 ulp of long-double libm for every 24-bit uniform") {
  long double worst_log = 0, worst_cos = 0, worst_sin = 0;
  for (uint32_t k = 0; k < (1u << 24); ++k) {
    const float l = rng::neg2_log_f32(k);
    const long double ref = reference_neg2_log(k, 24);
    const long double e = ulps(l, ref, 24);
    if (e > worst_log) worst_log = e;
    float c, s;
    rng::cos_sin_turn_f32(k, c, s);
    long double rc, rs;
    reference_turn(k, 24, rc, rs);
    if (ulps(c, rc, 24) > worst_cos) worst_cos = ulps(c, rc, 24);
    if (ulps(s, rs, 24) > worst_sin) worst_sin = ulps(s, rs, 24);
  }
  MESSAGE("float32 max error (ulp): -2 ln u1 " << static_cast<double>(worst_log) << ", cos "
                                               << static_cast<double>(worst_cos) << ", sin "
                                               << static_cast<double>(worst_sin));
  CHECK(worst_log <= 2);
  CHECK(worst_cos <= 2);
  CHECK(worst_sin <= 2);
}

TEST_CASE("float64 log and cos/sin are within 3 ulp of long-double libm over a dense sweep") {
  long double worst_log = 0, worst_cos = 0, worst_sin = 0;
  const uint64_t top = uint64_t{1} << 53;
  // 2^21 points spread over [0, 2^53) with varied low bits, plus both ends of the range.
  std::vector<uint64_t> ks;
  for (uint64_t i = 0; i < (uint64_t{1} << 21); ++i)
    ks.push_back((i << 32) ^ (i * 0x9E3779B97F4A7C15ull >> 32));
  for (uint64_t i = 0; i < 4096; ++i) {
    ks.push_back(i);
    ks.push_back(top - 1 - i);
  }
  for (uint64_t k : ks) {
    k &= top - 1;
    const long double ref = reference_neg2_log(k, 53);
    const long double e = ulps(rng::neg2_log_f64(k), ref, 53);
    if (e > worst_log) worst_log = e;
    double c, s;
    rng::cos_sin_turn_f64(k, c, s);
    long double rc, rs;
    reference_turn(k, 53, rc, rs);
    if (ulps(c, rc, 53) > worst_cos) worst_cos = ulps(c, rc, 53);
    if (ulps(s, rs, 53) > worst_sin) worst_sin = ulps(s, rs, 53);
  }
  MESSAGE("float64 max error (ulp): -2 ln u1 " << static_cast<double>(worst_log) << ", cos "
                                               << static_cast<double>(worst_cos) << ", sin "
                                               << static_cast<double>(worst_sin));
  CHECK(worst_log <= 3);
  CHECK(worst_cos <= 3);
  CHECK(worst_sin <= 3);
}

TEST_CASE("normals over a million counters are within a few ulp of the exact transform") {
  long double worst32 = 0, worst64 = 0;
  for (uint64_t c = 0; c < 1000000; ++c) {
    const uint64_t key = rng::normal_key(99), even = c & ~uint64_t{1};
    const uint64_t b1 = rng::bits(key, even), b2 = rng::bits(key, even + 1);
    for (int bits : {24, 53}) {
      long double rc, rs;
      reference_turn(b2 >> (64 - bits), bits, rc, rs);
      const long double exact = std::sqrt(reference_neg2_log(b1 >> (64 - bits), bits)) * ((c & 1) ? rs : rc);
      if (bits == 24) {
        const long double e = ulps(rng::normal_f32(99, c), exact, 24);
        if (e > worst32) worst32 = e;
      } else {
        const long double e = ulps(rng::normal(99, c), exact, 53);
        if (e > worst64) worst64 = e;
      }
    }
  }
  MESSAGE("normal max error (ulp): float32 " << static_cast<double>(worst32) << ", float64 "
                                             << static_cast<double>(worst64));
  // Measured 3.8 (float32) and 3.5 (float64): the radius (sqrt halves the log's error), the
  // cos or sin (under 2 ulp) and the product's rounding, which can also cross a binade of the result.
  CHECK(worst32 <= 5);
  CHECK(worst64 <= 5);
}

TEST_CASE("extreme uniforms give finite values: the largest radius, radius 0 and the quarter turns") {
  const uint32_t max24 = (1u << 24) - 1;
  // u1 = 2^-24: the largest radius, sqrt(48 ln 2).
  CHECK(rng::neg2_log_f32(0) == doctest::Approx(48 * std::log(2.0)).epsilon(1e-7));
  CHECK(rng::neg2_log_f32(max24) == 0.0f);  // u1 = 1
  const uint64_t max53 = (uint64_t{1} << 53) - 1;
  CHECK(rng::neg2_log_f64(0) == doctest::Approx(106 * std::log(2.0)).epsilon(1e-15));
  CHECK(rng::neg2_log_f64(max53) == 0.0);
  for (uint32_t k2 :
       {0u, (1u << 21) - 1, 1u << 21, 1u << 22, 1u << 23, 3u << 22, (1u << 24) - (1u << 21), max24}) {
    CAPTURE(k2);
    for (uint32_t k1 : {0u, 1u, max24 - 1, max24}) {
      float even, odd;
      rng::box_muller_f32(k1, k2, even, odd);
      CHECK(std::isfinite(even));
      CHECK(std::isfinite(odd));
      CHECK(std::fabs(even) <= 5.7686f);
      CHECK(std::fabs(odd) <= 5.7686f);
    }
    float c, s;
    rng::cos_sin_turn_f32(k2, c, s);
    CHECK(static_cast<double>(c) * c + static_cast<double>(s) * s == doctest::Approx(1.0).epsilon(1e-6));
  }
  for (uint64_t k2 : {uint64_t{0}, uint64_t{1} << 50, uint64_t{1} << 51, uint64_t{1} << 52, max53}) {
    for (uint64_t k1 : {uint64_t{0}, max53}) {
      double even, odd;
      rng::box_muller_f64(k1, k2, even, odd);
      CHECK(std::isfinite(even));
      CHECK(std::isfinite(odd));
    }
  }
  // Exact quarter turns: cos 0 = 1, sin 0 = 0, cos pi/2 = 0, cos pi = -1.
  float c, s;
  rng::cos_sin_turn_f32(0, c, s);
  CHECK(c == 1.0f);
  CHECK(s == 0.0f);
  rng::cos_sin_turn_f32(1u << 22, c, s);
  CHECK(c == 0.0f);
  CHECK(s == 1.0f);
  rng::cos_sin_turn_f32(1u << 23, c, s);
  CHECK(c == -1.0f);
  CHECK(s == 0.0f);
}

TEST_CASE("a block starting at any counter, odd or even, equals element-wise normals") {
  for (uint64_t first : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{127}, uint64_t{128},
                         uint64_t{129}, (uint64_t{1} << 40) + 1}) {
    for (int64_t count : {0, 1, 2, 3, 63, 64, 65, 127, 128, 129, 300}) {
      CAPTURE(first);
      CAPTURE(count);
      std::vector<float> f(static_cast<size_t>(count));
      std::vector<double> d(static_cast<size_t>(count));
      rng::normal_block(5, first, count, f.data());
      rng::normal_block(5, first, count, d.data());
      bool same = true;
      for (int64_t i = 0; i < count; ++i) {
        same = same && float_bits(f[i]) == float_bits(rng::normal_f32(5, first + i));
        same = same && d[i] == rng::normal(5, first + i);
      }
      CHECK(same);
    }
  }
}

// The CPU backend compiles its normal blocks for the widest vector unit the CPU has (creation.cpp,
// vector_clones.hpp); the element-wise reference here is compiled for the baseline. Several of the
// backend's 2^16-element chunks, starting at an odd counter, at a seed with no special bits.
TEST_CASE("the CPU backend's randn equals the element-wise reference at every counter, float32 and float64") {
  const uint64_t seed = 0x5EED5EED1234ull;
  const int64_t n = 3 * 65536 + 4099;
  for (tessera::DType dtype : {tessera::kFloat32, tessera::kFloat64}) {
    CAPTURE(dtype);
    tessera::Generator g(seed);
    (void)tessera::rand({1}, g);  // randn starts at counter 1
    const tessera::Tensor drawn = tessera::randn({n}, g, dtype);
    int64_t off = 0;
    if (dtype == tessera::kFloat32) {
      const std::vector<float> values = drawn.to_vector<float>();
      for (int64_t i = 0; i < n; ++i)
        off += float_bits(values[i]) != float_bits(rng::normal_f32(seed, 1 + static_cast<uint64_t>(i)));
    } else {
      const std::vector<double> values = drawn.to_vector<double>();
      for (int64_t i = 0; i < n; ++i) {
        const double reference = rng::normal(seed, 1 + static_cast<uint64_t>(i));
        off += std::memcmp(&values[i], &reference, sizeof(double)) != 0;
      }
    }
    CHECK(off == 0);
  }
}

TEST_CASE("blocks cut anywhere join to the same values") {
  const int64_t n = 1000;
  std::vector<float> whole(n), parts(n);
  std::vector<double> whole64(n), parts64(n);
  rng::normal_block(11, 3, n, whole.data());
  rng::normal_block(11, 3, n, whole64.data());
  // Cut points of every parity, including pieces of one element.
  const int64_t cuts[] = {0, 1, 2, 5, 70, 71, 200, 333, 334, 335, 999, n};
  for (size_t c = 0; c + 1 < std::size(cuts); ++c) {
    const int64_t begin = cuts[c], count = cuts[c + 1] - cuts[c];
    rng::normal_block(11, 3 + static_cast<uint64_t>(begin), count, parts.data() + begin);
    rng::normal_block(11, 3 + static_cast<uint64_t>(begin), count, parts64.data() + begin);
  }
  CHECK(std::memcmp(whole.data(), parts.data(), n * sizeof(float)) == 0);
  CHECK(std::memcmp(whole64.data(), parts64.data(), n * sizeof(double)) == 0);
}

TEST_CASE("a million normals have mean 0, variance 1, kurtosis 3 and tails beyond 4, all finite") {
  const int64_t n = 1000000;
  std::vector<float> f(n);
  std::vector<double> d(n);
  rng::normal_block(2024, 0, n, f.data());
  rng::normal_block(2024, 0, n, d.data());
  auto check = [&](const auto& xs, double bound) {
    double m1 = 0, m2 = 0, m4 = 0, largest = 0;
    int64_t beyond4 = 0, not_finite = 0;
    for (auto x : xs) {
      const double v = x;
      not_finite += std::isfinite(v) ? 0 : 1;
      m1 += v;
      m2 += v * v;
      m4 += v * v * v * v;
      beyond4 += std::fabs(v) > 4 ? 1 : 0;
      largest = std::max(largest, std::fabs(v));
    }
    m1 /= n;
    m2 /= n;
    m4 /= n;
    // Five standard errors: mean 1/sqrt(n), second moment sqrt(2/n), fourth moment sqrt(96/n).
    CHECK(not_finite == 0);
    CHECK(std::fabs(m1) < 0.005);
    CHECK(std::fabs(m2 - 1) < 0.0071);
    CHECK(std::fabs(m4 - 3) < 0.05);
    CHECK(beyond4 >= 20);  // expected 63 for 10^6 samples
    CHECK(largest <= bound);
  };
  check(f, 5.7686);
  check(d, 8.58);  // sqrt(106 ln 2)
}
