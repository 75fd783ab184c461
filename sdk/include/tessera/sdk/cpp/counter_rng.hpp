// The reference random-number algorithm every Tessera backend implements bit for bit.
//
// Counter-based (no state to carry between elements): element i of a "uniform" or "normal" kernel
// call with attributes (seed, offset) depends only on (seed, offset + i), one counter per element
// for both distributions. That is what makes random tensors identical whichever backend, thread
// count or chunking produced them (a chunk may start at any counter, odd or even). The core
// advances a generator's offset by the number of counters a call consumed (its element count).
//
// Normal: Box-Muller on pairs. Counters 2p and 2p+1 form pair p; the pair's two uniforms come from
// the *normal stream* (bits of seed ^ kNormalStream at counters 2p and 2p+1, so a normal never
// reuses the bits a uniform drew at the same counter), and the even counter's element takes
// r cos(theta), the odd one r sin(theta). So an element at an odd counter still depends only on
// (seed, its counter): a chunk starting there recomputes the pair and keeps the sine.
//
// The transform is written out here (range reduction and polynomials, no libm) so that its bits are
// the same on every compiler, CPU and backend: only IEEE +, -, *, / and sqrt, each rounded to
// nearest, in the order written, on values that never become subnormal (so FTZ/DAZ settings do not
// matter either). float32 outputs use a float transform of 24-bit uniforms, float64 outputs a
// double transform of 53-bit uniforms (measured accuracy: tests/sdk/counter_rng_test.cpp).
//
// FMA contraction would change the bits, so a translation unit using this header must be compiled
// with -ffp-contract=off (nvcc: --fmad=false) wherever the target has FMA instructions: the check
// below refuses to compile on such a target unless TESSERA_FP_CONTRACT_OFF says the flag is set.
// Baseline x86-64 (SSE2) has no FMA, so there nothing can be fused.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__FP_FAST_FMA) && !defined(TESSERA_FP_CONTRACT_OFF)
#error \
    "counter_rng.hpp: this target has FMA; compile with -ffp-contract=off and define TESSERA_FP_CONTRACT_OFF"
#endif

namespace tessera::sdk::counter_rng {

// SplitMix64's finaliser over a Weyl sequence: a well-mixed 64-bit value per (seed, counter).
inline uint64_t bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with 53 random bits.
inline double uniform(uint64_t seed, uint64_t counter) {
  return static_cast<double>(bits(seed, counter) >> 11) * 0x1.0p-53;
}

// The key of the normal stream ("normal" in ASCII): normals draw their bits from bits(key, ...).
constexpr uint64_t kNormalStream = 0x6E6F726D616C0000ull;
inline uint64_t normal_key(uint64_t seed) { return seed ^ kNormalStream; }

// ---- float32: uniforms of 24 bits ------------------------------------------------------------
// k1 = top 24 bits of the pair's even counter, u1 = (k1 + 1) / 2^24 in (0, 1] (so log(u1) is
// finite: |x| <= sqrt(2 ln 2^24) = 5.77); k2 = top 24 bits of the odd counter, theta = 2 pi k2 / 2^24.

// -2 ln((k1 + 1) / 2^24) for k1 < 2^24, to about 1 ulp. Writes n = k1 + 1 (exact in float) as
// 2^E m with m in [sqrt(1/2), sqrt(2)), so ln u1 = (E - 24) ln 2 + ln m; ln m = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| <= 0.1716, as 2s + s^3 P(s^2) (P fitted for relative error 1.2e-9).
// ln 2 is split so that (E - 24) * kLn2Hi is exact.
inline float neg2_log_f32(uint32_t k1) {
  const float n = static_cast<float>(static_cast<int32_t>(k1 + 1));
  const uint32_t nb = std::bit_cast<uint32_t>(n);
  const uint32_t mb1 = (nb & 0x007FFFFFu) | 0x3F800000u;  // m in [1, 2)
  const uint32_t fold = mb1 > 0x3FB504F3u ? 1u : 0u;      // m > sqrt(2): halve it
  const float m = std::bit_cast<float>(mb1 - (fold << 23));
  const float e = static_cast<float>(static_cast<int32_t>(nb >> 23) - 127 + static_cast<int32_t>(fold) - 24);
  const float f = m - 1.0f;  // exact
  const float s = f / (m + 1.0f);
  const float z = s * s;
  const float ln_m = 2.0f * s + s * z * (0x1.55557ap-1f + z * (0x1.995e36p-2f + z * 0x1.31ee64p-2f));
  const float ln_u = e * 0x1.62e4p-1f + (e * 0x1.7f7d1cp-20f + ln_m);
  return -2.0f * ln_u;
}

// cos and sin of 2 pi k2 / 2^24 for k2 < 2^24, to about 1 ulp. The quadrant q and the remainder j
// (|j| <= 2^21) come exactly from the integer; t = j * 2 pi / 2^24 is in [-pi/4, pi/4], where
// sin t = t + t^3 S(t^2) and cos t = 1 - t^2/2 + t^4 C(t^2) (fitted: relative error 7.7e-9, 4.3e-10).
inline void cos_sin_turn_f32(uint32_t k2, float& cos_out, float& sin_out) {
  const int32_t k = static_cast<int32_t>(k2);
  const int32_t quadrant = (k + (1 << 21)) >> 22;  // 0..4; 4 is quadrant 0 of the next turn
  const float t = static_cast<float>(k - (quadrant << 22)) * 0x1.921fb6p-22f;
  const float z = t * t;
  const float st = t + t * z * (-0x1.555546p-3f + z * (0x1.110746p-7f + z * -0x1.99477ap-13f));
  const float ct = (1.0f - 0.5f * z) + z * z * (0x1.55554ap-5f + z * (-0x1.6c0c6p-10f + z * 0x1.99f73p-16f));
  const int32_t q = quadrant & 3;
  // theta = q pi/2 + t: q 0 (cos t, sin t), 1 (-sin t, cos t), 2 (-cos t, -sin t), 3 (sin t, -cos t).
  const float a = (q & 1) ? st : ct;
  const float b = (q & 1) ? ct : st;
  cos_out = ((q + 1) & 2) ? -a : a;
  sin_out = (q & 2) ? -b : b;
}

// The pair's two normals (Box-Muller): r cos(theta), r sin(theta) with r = sqrt(-2 ln u1).
inline void box_muller_f32(uint32_t k1, uint32_t k2, float& even, float& odd) {
  const float r = std::sqrt(neg2_log_f32(k1));  // IEEE: correctly rounded
  float c, s;
  cos_sin_turn_f32(k2, c, s);
  even = r * c;
  odd = r * s;
}

inline uint32_t top24(uint64_t b) { return static_cast<uint32_t>(b >> 40); }

// ---- float64: uniforms of 53 bits ------------------------------------------------------------
// k1, k2 = top 53 bits of the pair's two counters; u1 = (k1 + 1) / 2^53, theta = 2 pi k2 / 2^53;
// the same reductions as float32 with longer polynomials (fitted relative errors 1.3e-18 for
// ln, 1.3e-17 and 6.4e-19 for sin and cos).

// Integers below 2^32 (unsigned) and 2^51 (signed) as doubles, exactly, with integer operations
// only: a compiler vectorises these with SSE2, which has no 64-bit integer conversion.
inline double u32_to_double(uint64_t x) {
  return std::bit_cast<double>(0x4330000000000000ull | x) - 0x1.0p52;
}
inline double i51_to_double(int64_t x) {
  return std::bit_cast<double>(0x4338000000000000ull + static_cast<uint64_t>(x)) - 0x1.8p52;
}

inline double neg2_log_f64(uint64_t k1) {
  const uint64_t nk = k1 + 1;                                                               // <= 2^53
  const double n = u32_to_double(nk >> 32) * 0x1.0p32 + u32_to_double(nk & 0xFFFFFFFFull);  // exact
  const uint64_t nb = std::bit_cast<uint64_t>(n);
  const uint64_t mantissa = nb & 0x000FFFFFFFFFFFFFull;
  // m > sqrt(2) (mantissa field above 0x6A09E667F3BCD) as a carry into bit 52: SSE2 has no 64-bit compare.
  const uint64_t fold = (mantissa + (0x000FFFFFFFFFFFFFull - 0x0006A09E667F3BCDull)) >> 52;
  const double m = std::bit_cast<double>((mantissa | 0x3FF0000000000000ull) - (fold << 52));
  const double e = i51_to_double(static_cast<int64_t>(nb >> 52) - 1023 + static_cast<int64_t>(fold) - 53);
  const double f = m - 1.0;
  const double s = f / (m + 1.0);
  const double z = s * s;
  const double p =
      0x1.5555555555594p-1 +
      z * (0x1.999999997f6f5p-2 +
           z * (0x1.249249423e2a7p-2 +
                z * (0x1.c71c51d473cc4p-3 +
                     z * (0x1.7466486191975p-3 + z * (0x1.39a0e09950f99p-3 + z * 0x1.2f0d2d34cc937p-3)))));
  const double ln_m = 2.0 * s + s * z * p;
  const double ln_u = e * 0x1.62e42fefa39cp-1 + (e * 0x1.79abc9e3b398p-48 + ln_m);
  return -2.0 * ln_u;
}

inline void cos_sin_turn_f64(uint64_t k2, double& cos_out, double& sin_out) {
  const uint64_t quadrant = (k2 + (uint64_t{1} << 50)) >> 51;  // 0..4, as for float32
  const double t = i51_to_double(static_cast<int64_t>(k2 - (quadrant << 51))) * 0x1.921fb54442d18p-51;
  const double z = t * t;
  const double sp =
      -0x1.5555555555548p-3 +
      z * (0x1.111111110f80ap-7 +
           z * (-0x1.a01a019c06493p-13 +
                z * (0x1.71de356f7940ap-19 + z * (-0x1.ae5e60a67ae11p-26 + z * 0x1.5d9193b3477e3p-33))));
  const double cp =
      0x1.555555555554bp-5 +
      z * (-0x1.6c16c16c15095p-10 +
           z * (0x1.a01a019c9de16p-16 +
                z * (-0x1.27e4f7fd1eaddp-22 + z * (0x1.1ee9e400a520dp-29 + z * -0x1.8faad9f48a133p-37))));
  const double st = t + t * z * sp;
  const double ct = (1.0 - 0.5 * z) + z * z * cp;
  // The float32 quadrant table, with masks and sign bits instead of branches (SSE2 has no 64-bit
  // compare): swap = all ones for odd quadrants; a sign flip is an exclusive or of bit 63.
  const uint64_t swap = uint64_t{0} - (quadrant & 1);
  const uint64_t sb = std::bit_cast<uint64_t>(st), cb = std::bit_cast<uint64_t>(ct);
  const uint64_t a = (sb & swap) | (cb & ~swap), b = (cb & swap) | (sb & ~swap);
  cos_out = std::bit_cast<double>(a ^ (((quadrant + 1) & 2) << 62));
  sin_out = std::bit_cast<double>(b ^ ((quadrant & 2) << 62));
}

inline void box_muller_f64(uint64_t k1, uint64_t k2, double& even, double& odd) {
  const double r = std::sqrt(neg2_log_f64(k1));
  double c, s;
  cos_sin_turn_f64(k2, c, s);
  even = r * c;
  odd = r * s;
}

inline uint64_t top53(uint64_t b) { return b >> 11; }

// ---- one element, and blocks of elements -----------------------------------------------------

// The standard normal at `counter`, float32 and float64 (the reference for one element).
inline float normal_f32(uint64_t seed, uint64_t counter) {
  const uint64_t key = normal_key(seed), even = counter & ~uint64_t{1};
  float c, s;
  box_muller_f32(top24(bits(key, even)), top24(bits(key, even + 1)), c, s);
  return (counter & 1) ? s : c;
}
inline double normal(uint64_t seed, uint64_t counter) {
  const uint64_t key = normal_key(seed), even = counter & ~uint64_t{1};
  double c, s;
  box_muller_f64(top53(bits(key, even)), top53(bits(key, even + 1)), c, s);
  return (counter & 1) ? s : c;
}

// mean + std * x for a normal kernel's attributes, rounded once to T; x itself for (0, 1).
template <class T>
T scale_normal(T x, double mean, double stddev) {
  return mean == 0.0 && stddev == 1.0 ? x : static_cast<T>(mean + stddev * static_cast<double>(x));
}

namespace detail {

template <class T>
struct NormalPath;
template <>
struct NormalPath<float> {
  using Uniform = uint32_t;
  static Uniform take(uint64_t b) { return top24(b); }
  static void transform(Uniform k1, Uniform k2, float& even, float& odd) {
    box_muller_f32(k1, k2, even, odd);
  }
};
template <>
struct NormalPath<double> {
  using Uniform = uint64_t;
  static Uniform take(uint64_t b) { return top53(b); }
  static void transform(Uniform k1, Uniform k2, double& even, double& odd) {
    box_muller_f64(k1, k2, even, odd);
  }
};

}  // namespace detail

// out[i] = normal at counter first + i for i < count (T: float or double); equal, element for
// element, to normal_f32 / normal, for any first and count. Works on blocks of a fixed number of
// pairs (bits into small arrays, then the transform over the arrays) so that the loops have a
// constant trip count and the compiler vectorises them; a partial block at either end computes
// the whole block and keeps what it needs.
template <class T>
void normal_block(uint64_t seed, uint64_t first, int64_t count, T* out) {
  using Path = detail::NormalPath<T>;
  constexpr uint64_t kPairs = 64;
  const uint64_t key = normal_key(seed);
  const uint64_t end = first + static_cast<uint64_t>(count);
  typename Path::Uniform k1[kPairs], k2[kPairs];
  T even[kPairs], odd[kPairs];
  for (uint64_t c = first; c < end;) {
    const uint64_t pair = c >> 1;
    for (uint64_t j = 0; j < kPairs; ++j) {
      k1[j] = Path::take(bits(key, 2 * (pair + j)));
      k2[j] = Path::take(bits(key, 2 * (pair + j) + 1));
    }
    for (uint64_t j = 0; j < kPairs; ++j) Path::transform(k1[j], k2[j], even[j], odd[j]);
    const uint64_t block_end = 2 * (pair + kPairs);
    if (c == 2 * pair && block_end <= end) {
      T* o = out + (c - first);
      for (uint64_t j = 0; j < kPairs; ++j) {
        o[2 * j] = even[j];
        o[2 * j + 1] = odd[j];
      }
      c = block_end;
    } else {
      for (; c < end && c < block_end; ++c)
        out[c - first] = (c & 1) ? odd[(c >> 1) - pair] : even[(c >> 1) - pair];
    }
  }
}

}  // namespace tessera::sdk::counter_rng
