#include "half_conversions.hpp"

#include <cstddef>
#include <cstdint>

#include "tessera/sdk/cpp/half_precision.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define TESSERA_CPU_HALF_X86 1
#endif

namespace tessera::cpu {
namespace {

// Outputs of at least this many bytes are streamed past the caches (see the header).
constexpr int64_t kStreamBytes = int64_t{4} << 20;

// The scalar conversions, for the elements before a vector store's alignment and after the last
// whole vector, and for CPUs without the vector units.
void narrow_bfloat16_scalar(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = sdk::bfloat16_bits_from_float(x[i]);
}
void narrow_float16_scalar(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = sdk::float16_bits_from_float(x[i]);
}
void widen_bfloat16_scalar(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = sdk::float_from_bfloat16_bits(x[i]);
}
void widen_float16_scalar(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = sdk::float_from_float16_bits(x[i]);
}

// How many leading elements of `y` (elements of `size` bytes) to convert one by one so that the
// rest starts on an `align`-byte boundary (all of them when that is past n).
int64_t head_to_align(const void* y, int64_t size, int64_t align, int64_t n) {
  const auto address = reinterpret_cast<uintptr_t>(y);
  if (address % static_cast<uintptr_t>(size) != 0) return n;  // never aligns: all scalar
  const auto misalign = static_cast<int64_t>(address % static_cast<uintptr_t>(align));
  const int64_t head = misalign == 0 ? 0 : (align - misalign) / size;
  return head < n ? head : n;
}

#if TESSERA_CPU_HALF_X86

// GCC 12's AVX-512 intrinsics start some results from a self-initialised "undefined" vector, which
// its -Wmaybe-uninitialized reports once they are inlined (GCC bug 105593, fixed in 12.3).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// ---- AVX-512: sixteen elements a step.

__attribute__((target("avx512f"))) __m256i bfloat16_of_16(__m512i u) {
  const __m512i lowest_kept = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lowest_kept), 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, _mm512_set1_epi32(0x7fc0)));
}

__attribute__((target("avx512f"))) void narrow_bfloat16_avx512(const float* x, uint16_t* y, int64_t n,
                                                               bool stream) {
  const int64_t head = stream ? head_to_align(y, 2, 32, n) : 0;
  narrow_bfloat16_scalar(x, y, head);
  int64_t i = head;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = bfloat16_of_16(_mm512_loadu_si512(x + i));
    if (stream)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(y + i), h);
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), h);
  }
  narrow_bfloat16_scalar(x + i, y + i, n - i);
  if (stream) _mm_sfence();
}

__attribute__((target("avx512f"))) void narrow_float16_avx512(const float* x, uint16_t* y, int64_t n,
                                                              bool stream) {
  const int64_t head = stream ? head_to_align(y, 2, 32, n) : 0;
  narrow_float16_scalar(x, y, head);
  int64_t i = head;
  const __m512 quiet_nan = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000));  // -> 0x7e00
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), quiet_nan);
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    if (stream)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(y + i), h);
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), h);
  }
  narrow_float16_scalar(x + i, y + i, n - i);
  if (stream) _mm_sfence();
}

__attribute__((target("avx512f"))) void widen_bfloat16_avx512(const uint16_t* x, float* y, int64_t n,
                                                              bool stream) {
  const int64_t head = stream ? head_to_align(y, 4, 64, n) : 0;
  widen_bfloat16_scalar(x, y, head);
  int64_t i = head;
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))), 16);
    if (stream)
      _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i), u);
    else
      _mm512_storeu_si512(y + i, u);
  }
  widen_bfloat16_scalar(x + i, y + i, n - i);
  if (stream) _mm_sfence();
}

__attribute__((target("avx512f"))) void widen_float16_avx512(const uint16_t* x, float* y, int64_t n,
                                                             bool stream) {
  const int64_t head = stream ? head_to_align(y, 4, 64, n) : 0;
  widen_float16_scalar(x, y, head);
  int64_t i = head;
  const __m512i exponent = _mm512_set1_epi32(0x7c00);
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m512i wide = _mm512_cvtepu16_epi32(h);
    __m512i u = _mm512_castps_si512(_mm512_cvtph_ps(h));
    // Infinities and NaNs: sign, the all-ones exponent, the payload shifted as it is.
    const __mmask16 special = _mm512_cmpeq_epi32_mask(_mm512_and_si512(wide, exponent), exponent);
    const __m512i kept = _mm512_or_si512(
        _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(wide, _mm512_set1_epi32(0x8000)), 16),
                        _mm512_set1_epi32(0x7f800000)),
        _mm512_slli_epi32(_mm512_and_si512(wide, _mm512_set1_epi32(0x3ff)), 13));
    u = _mm512_mask_mov_epi32(u, special, kept);
    if (stream)
      _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i), u);
    else
      _mm512_storeu_si512(y + i, u);
  }
  widen_float16_scalar(x + i, y + i, n - i);
  if (stream) _mm_sfence();
}

// ---- AVX2 (with F16C for float16): eight elements a step.

__attribute__((target("avx2"))) __m128i bfloat16_of_8(__m256i u) {
  const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lowest_kept), 16);
  // |u| > infinity's bits as a signed compare: both sides are below 2^31.
  const __m256i nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  rounded = _mm256_blendv_epi8(rounded, _mm256_set1_epi32(0x7fc0), nan);
  // Every lane is below 2^16 now: pack the two 128-bit halves' 32-bit lanes to 16 bits.
  return _mm_packus_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1));
}

__attribute__((target("avx2"))) void narrow_bfloat16_avx2(const float* x, uint16_t* y, int64_t n,
                                                          bool stream) {
  const int64_t head = stream ? head_to_align(y, 2, 16, n) : 0;
  narrow_bfloat16_scalar(x, y, head);
  int64_t i = head;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = bfloat16_of_8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    if (stream)
      _mm_stream_si128(reinterpret_cast<__m128i*>(y + i), h);
    else
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), h);
  }
  narrow_bfloat16_scalar(x + i, y + i, n - i);
  if (stream) _mm_sfence();
}

__attribute__((target("avx2,f16c"))) void narrow_float16_avx2(const float* x, uint16_t* y, int64_t n,
                                                              bool stream) {
  const int64_t head = stream ? head_to_align(y, 2, 16, n) : 0;
  narrow_float16_scalar(x, y, head);
  int64_t i = head;
  const __m256 quiet_nan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    v = _mm256_blendv_ps(v, quiet_nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    if (stream)
      _mm_stream_si128(reinterpret_cast<__m128i*>(y + i), h);
    else
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), h);
  }
  narrow_float16_scalar(x + i, y + i, n - i);
  if (stream) _mm_sfence();
}

__attribute__((target("avx2"))) void widen_bfloat16_avx2(const uint16_t* x, float* y, int64_t n,
                                                         bool stream) {
  const int64_t head = stream ? head_to_align(y, 4, 32, n) : 0;
  widen_bfloat16_scalar(x, y, head);
  int64_t i = head;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))), 16);
    if (stream)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(y + i), u);
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), u);
  }
  widen_bfloat16_scalar(x + i, y + i, n - i);
  if (stream) _mm_sfence();
}

__attribute__((target("avx2,f16c"))) void widen_float16_avx2(const uint16_t* x, float* y, int64_t n,
                                                             bool stream) {
  const int64_t head = stream ? head_to_align(y, 4, 32, n) : 0;
  widen_float16_scalar(x, y, head);
  int64_t i = head;
  const __m256i exponent = _mm256_set1_epi32(0x7c00);
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    const __m256i wide = _mm256_cvtepu16_epi32(h);
    const __m256i u = _mm256_castps_si256(_mm256_cvtph_ps(h));
    const __m256i special = _mm256_cmpeq_epi32(_mm256_and_si256(wide, exponent), exponent);
    const __m256i kept = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(wide, _mm256_set1_epi32(0x8000)), 16),
                        _mm256_set1_epi32(0x7f800000)),
        _mm256_slli_epi32(_mm256_and_si256(wide, _mm256_set1_epi32(0x3ff)), 13));
    const __m256i result = _mm256_blendv_epi8(u, kept, special);
    if (stream)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(y + i), result);
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), result);
  }
  widen_float16_scalar(x + i, y + i, n - i);
  if (stream) _mm_sfence();
}

enum class HalfUnit { kAvx512, kAvx2, kAvx2F16c, kBaseline };

// clang's __builtin_cpu_supports knows no "f16c", so the bit is read from
// CPUID leaf 1 directly (AVX2's check already covers the OS saving ymm state).
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

HalfUnit half_unit() {
  static const HalfUnit unit = __builtin_cpu_supports("avx512f")              ? HalfUnit::kAvx512
                               : __builtin_cpu_supports("avx2") && has_f16c() ? HalfUnit::kAvx2F16c
                               : __builtin_cpu_supports("avx2")               ? HalfUnit::kAvx2
                                                                              : HalfUnit::kBaseline;
  return unit;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // TESSERA_CPU_HALF_X86

bool streams(int64_t n, int64_t out_size) { return n * out_size >= kStreamBytes; }

}  // namespace

void narrow_to_bfloat16(const float* x, uint16_t* y, int64_t n) {
#if TESSERA_CPU_HALF_X86
  switch (half_unit()) {
    case HalfUnit::kAvx512:
      return narrow_bfloat16_avx512(x, y, n, streams(n, 2));
    case HalfUnit::kAvx2:
    case HalfUnit::kAvx2F16c:
      return narrow_bfloat16_avx2(x, y, n, streams(n, 2));
    case HalfUnit::kBaseline:
      break;
  }
#endif
  narrow_bfloat16_scalar(x, y, n);
}

void narrow_to_float16(const float* x, uint16_t* y, int64_t n) {
#if TESSERA_CPU_HALF_X86
  switch (half_unit()) {
    case HalfUnit::kAvx512:
      return narrow_float16_avx512(x, y, n, streams(n, 2));
    case HalfUnit::kAvx2F16c:
      return narrow_float16_avx2(x, y, n, streams(n, 2));
    case HalfUnit::kAvx2:
    case HalfUnit::kBaseline:
      break;
  }
#endif
  narrow_float16_scalar(x, y, n);
}

void widen_from_bfloat16(const uint16_t* x, float* y, int64_t n) {
#if TESSERA_CPU_HALF_X86
  switch (half_unit()) {
    case HalfUnit::kAvx512:
      return widen_bfloat16_avx512(x, y, n, streams(n, 4));
    case HalfUnit::kAvx2:
    case HalfUnit::kAvx2F16c:
      return widen_bfloat16_avx2(x, y, n, streams(n, 4));
    case HalfUnit::kBaseline:
      break;
  }
#endif
  widen_bfloat16_scalar(x, y, n);
}

void widen_from_float16(const uint16_t* x, float* y, int64_t n) {
#if TESSERA_CPU_HALF_X86
  switch (half_unit()) {
    case HalfUnit::kAvx512:
      return widen_float16_avx512(x, y, n, streams(n, 4));
    case HalfUnit::kAvx2F16c:
      return widen_float16_avx2(x, y, n, streams(n, 4));
    case HalfUnit::kAvx2:
    case HalfUnit::kBaseline:
      break;
  }
#endif
  widen_float16_scalar(x, y, n);
}

}  // namespace tessera::cpu
