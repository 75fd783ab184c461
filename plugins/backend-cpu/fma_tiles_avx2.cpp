// The AVX2 tiles: 4 rows x 3 vectors (24 floats or 12 doubles) per tile. Masks are vectors whose
// active lanes have the top bit set, as vmaskmov reads them.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "fma_tiles.hpp"

// CMakeLists.txt compiles this file alone for its unit (-mavx2 -mfma): GCC's and Clang's
// target pragmas differ, and a flag on the file works in both.
#if !defined(__AVX2__) || !defined(__FMA__)
#error "fma_tiles_avx2.cpp must be compiled with -mavx2 -mfma (plugins/backend-cpu/CMakeLists.txt)"
#endif

namespace tessera::cpu {
namespace avx2_lanes {

template <class T>
struct Lanes;

template <>
struct Lanes<float> {
  using Vec = __m256;
  using Mask = __m256i;
  static constexpr int kWidth = 8;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Mask mask_of(int count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static void store(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  static Vec broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
};

template <>
struct Lanes<double> {
  using Vec = __m256d;
  using Mask = __m256i;
  static constexpr int kWidth = 4;
  static Vec zero() { return _mm256_setzero_pd(); }
  static Mask mask_of(int count) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static Vec load(const double* p) { return _mm256_loadu_pd(p); }
  static Vec load(const double* p, Mask m) { return _mm256_maskload_pd(p, m); }
  static void store(double* p, Vec v) { _mm256_storeu_pd(p, v); }
  static void store(double* p, Vec v, Mask m) { _mm256_maskstore_pd(p, m, v); }
  static Vec broadcast(const double* p) { return _mm256_broadcast_sd(p); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_pd(a, b, c); }
};

#include "fma_tile_loop.inc"

}  // namespace avx2_lanes

void avx2_tile(const FmaTile<float>& t) { avx2_lanes::tile_with_rows<float, kAvx2Tile<float>.rows, 3>(t); }
void avx2_tile(const FmaTile<double>& t) { avx2_lanes::tile_with_rows<double, kAvx2Tile<double>.rows, 3>(t); }

}  // namespace tessera::cpu

#endif
