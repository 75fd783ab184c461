// The AVX-512 tiles: 8 rows x 3 vectors (48 floats or 24 doubles) per tile.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "fma_tiles.hpp"

// CMakeLists.txt compiles this file alone for its unit (-mavx512f -mfma): GCC's and Clang's
// target pragmas differ, and a flag on the file works in both.
#if !defined(__AVX512F__) || !defined(__FMA__)
#error "fma_tiles_avx512.cpp must be compiled with -mavx512f -mfma (plugins/backend-cpu/CMakeLists.txt)"
#endif

namespace tessera::cpu {
namespace avx512_lanes {

template <class T>
struct Lanes;

template <>
struct Lanes<float> {
  using Vec = __m512;
  using Mask = __mmask16;
  static constexpr int kWidth = 16;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Mask mask_of(int count) {
    return count >= kWidth ? Mask(0xFFFF) : count <= 0 ? Mask(0) : Mask((1u << count) - 1);
  }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static void store(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static Vec broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
};

template <>
struct Lanes<double> {
  using Vec = __m512d;
  using Mask = __mmask8;
  static constexpr int kWidth = 8;
  static Vec zero() { return _mm512_setzero_pd(); }
  static Mask mask_of(int count) {
    return count >= kWidth ? Mask(0xFF) : count <= 0 ? Mask(0) : Mask((1u << count) - 1);
  }
  static Vec load(const double* p) { return _mm512_loadu_pd(p); }
  static Vec load(const double* p, Mask m) { return _mm512_maskz_loadu_pd(m, p); }
  static void store(double* p, Vec v) { _mm512_storeu_pd(p, v); }
  static void store(double* p, Vec v, Mask m) { _mm512_mask_storeu_pd(p, m, v); }
  static Vec broadcast(const double* p) { return _mm512_set1_pd(*p); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_pd(a, b, c); }
};

#include "fma_tile_loop.inc"

}  // namespace avx512_lanes

void avx512_tile(const FmaTile<float>& t) {
  avx512_lanes::tile_with_rows<float, kAvx512Tile<float>.rows, 3>(t);
}
void avx512_tile(const FmaTile<double>& t) {
  avx512_lanes::tile_with_rows<double, kAvx512Tile<double>.rows, 3>(t);
}

}  // namespace tessera::cpu

#endif
