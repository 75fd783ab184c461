// The device twin of sdk/include/tessera/sdk/cpp/counter_rng.hpp: the reference counter-based RNG
// every backend implements bit for bit ("uniform" and "normal" kernels), for CUDA kernels.
//
// Why a twin and not the SDK header itself: its functions are plain `inline` host functions using
// std::bit_cast and std::sqrt, which device code cannot call (nvcc would need them marked __device__
// or constexpr, and the SDK header must stay free of CUDA). This file repeats the same algorithm,
// constant for constant and operation for operation, with CUDA's bit-reinterpreting intrinsics.
// IT MUST STAY IN STEP WITH THE SDK HEADER: any change there (constants, polynomial, order of
// operations) has to be made here too, and tools/conformance compares the two backends' bits.
//
// Bit-exactness on the GPU needs what the SDK header needs on the CPU: each +, -, *, / and sqrt
// rounded once to nearest, in the order written. So every file including this one is compiled with
//   -fmad=false        (no fused multiply-add contraction; the CMake sets it for creation.cu)
// and must NOT use -use_fast_math, -prec-div=false or -prec-sqrt=false (nvcc's defaults give IEEE
// division and a correctly rounded sqrt). Values never become subnormal, so -ftz does not matter.
#pragma once

#include <cstdint>

namespace tessera::cuda::counter_rng {

// SplitMix64's finaliser over a Weyl sequence: a well-mixed 64-bit value per (seed, counter).
__device__ inline uint64_t bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with 53 random bits (the integer is below 2^53, so converting it is exact).
__device__ inline double uniform(uint64_t seed, uint64_t counter) {
  return static_cast<double>(bits(seed, counter) >> 11) * 0x1.0p-53;
}

// The key of the normal stream ("normal" in ASCII).
constexpr uint64_t kNormalStream = 0x6E6F726D616C0000ull;
__device__ inline uint64_t normal_key(uint64_t seed) { return seed ^ kNormalStream; }

// ---- float32 (see the SDK header for the derivation) -----------------------------------------

__device__ inline float neg2_log_f32(uint32_t k1) {
  const float n = static_cast<float>(static_cast<int32_t>(k1 + 1));  // <= 2^24: exact
  const uint32_t nb = __float_as_uint(n);
  const uint32_t mb1 = (nb & 0x007FFFFFu) | 0x3F800000u;  // m in [1, 2)
  const uint32_t fold = mb1 > 0x3FB504F3u ? 1u : 0u;      // m > sqrt(2): halve it
  const float m = __uint_as_float(mb1 - (fold << 23));
  const float e = static_cast<float>(static_cast<int32_t>(nb >> 23) - 127 + static_cast<int32_t>(fold) - 24);
  const float f = m - 1.0f;
  const float s = f / (m + 1.0f);
  const float z = s * s;
  const float ln_m = 2.0f * s + s * z * (0x1.55557ap-1f + z * (0x1.995e36p-2f + z * 0x1.31ee64p-2f));
  const float ln_u = e * 0x1.62e4p-1f + (e * 0x1.7f7d1cp-20f + ln_m);
  return -2.0f * ln_u;
}

__device__ inline void cos_sin_turn_f32(uint32_t k2, float& cos_out, float& sin_out) {
  const int32_t k = static_cast<int32_t>(k2);
  const int32_t quadrant = (k + (1 << 21)) >> 22;
  const float t = static_cast<float>(k - (quadrant << 22)) * 0x1.921fb6p-22f;
  const float z = t * t;
  const float st = t + t * z * (-0x1.555546p-3f + z * (0x1.110746p-7f + z * -0x1.99477ap-13f));
  const float ct = (1.0f - 0.5f * z) + z * z * (0x1.55554ap-5f + z * (-0x1.6c0c6p-10f + z * 0x1.99f73p-16f));
  const int32_t q = quadrant & 3;
  const float a = (q & 1) ? st : ct;
  const float b = (q & 1) ? ct : st;
  cos_out = ((q + 1) & 2) ? -a : a;
  sin_out = (q & 2) ? -b : b;
}

__device__ inline void box_muller_f32(uint32_t k1, uint32_t k2, float& even, float& odd) {
  const float r = sqrtf(neg2_log_f32(k1));  // correctly rounded (nvcc default -prec-sqrt=true)
  float c, s;
  cos_sin_turn_f32(k2, c, s);
  even = r * c;
  odd = r * s;
}

__device__ inline uint32_t top24(uint64_t b) { return static_cast<uint32_t>(b >> 40); }

// ---- float64 ----------------------------------------------------------------------------------
// The SDK header builds doubles from integers with bit tricks because SSE2 lacks 64-bit integer
// conversion; the GPU converts them directly. Both are exact (the integers are below 2^53 and
// 2^51), so the values, and everything computed from them, are the same.

__device__ inline double neg2_log_f64(uint64_t k1) {
  const double n = static_cast<double>(k1 + 1);  // <= 2^53: exact
  const uint64_t nb = static_cast<uint64_t>(__double_as_longlong(n));
  const uint64_t mantissa = nb & 0x000FFFFFFFFFFFFFull;
  const uint64_t fold = (mantissa + (0x000FFFFFFFFFFFFFull - 0x0006A09E667F3BCDull)) >> 52;  // m > sqrt(2)
  const double m =
      __longlong_as_double(static_cast<long long>((mantissa | 0x3FF0000000000000ull) - (fold << 52)));
  const double e =
      static_cast<double>(static_cast<int64_t>(nb >> 52) - 1023 + static_cast<int64_t>(fold) - 53);
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

__device__ inline void cos_sin_turn_f64(uint64_t k2, double& cos_out, double& sin_out) {
  const uint64_t quadrant = (k2 + (uint64_t{1} << 50)) >> 51;
  const double t = static_cast<double>(static_cast<int64_t>(k2 - (quadrant << 51))) * 0x1.921fb54442d18p-51;
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
  // The float32 quadrant table (a sign flip negates exactly, so branches give the header's bits).
  const bool odd_quadrant = (quadrant & 1) != 0;
  const double a = odd_quadrant ? st : ct;
  const double b = odd_quadrant ? ct : st;
  cos_out = ((quadrant + 1) & 2) ? -a : a;
  sin_out = (quadrant & 2) ? -b : b;
}

__device__ inline void box_muller_f64(uint64_t k1, uint64_t k2, double& even, double& odd) {
  const double r = sqrt(neg2_log_f64(k1));
  double c, s;
  cos_sin_turn_f64(k2, c, s);
  even = r * c;
  odd = r * s;
}

__device__ inline uint64_t top53(uint64_t b) { return b >> 11; }

// ---- one element ------------------------------------------------------------------------------
// Element `counter` recomputes its whole Box-Muller pair and keeps its half (cosine for even
// counters, sine for odd), so it depends only on (seed, counter), as in the SDK header.

__device__ inline float normal_f32(uint64_t seed, uint64_t counter) {
  const uint64_t key = normal_key(seed), even = counter & ~uint64_t{1};
  float c, s;
  box_muller_f32(top24(bits(key, even)), top24(bits(key, even + 1)), c, s);
  return (counter & 1) ? s : c;
}

__device__ inline double normal(uint64_t seed, uint64_t counter) {
  const uint64_t key = normal_key(seed), even = counter & ~uint64_t{1};
  double c, s;
  box_muller_f64(top53(bits(key, even)), top53(bits(key, even + 1)), c, s);
  return (counter & 1) ? s : c;
}

// mean + std * x for a normal kernel's attributes, rounded once to T; x itself for (0, 1).
template <class T>
__device__ T scale_normal(T x, double mean, double stddev) {
  return mean == 0.0 && stddev == 1.0 ? x : static_cast<T>(mean + stddev * static_cast<double>(x));
}

}  // namespace tessera::cuda::counter_rng
