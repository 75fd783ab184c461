#include "fma_peak.hpp"

#include <time.h>

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {
namespace {

#if defined(__x86_64__)

// Sixteen accumulators: more chains than FMA latency x FMA pipes on current x86 cores (4 x 2), so
// the pipes never wait for a result. Returns a sum of the chains so none is optimised away.
constexpr int kChains = 16;

float sum_of(const float* lanes, int count) {
  float sum = 0;
  for (int i = 0; i < count; ++i) sum += lanes[i];
  return sum;
}

__attribute__((target("avx512f"))) float chains_avx512(int64_t rounds) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(i));
  const __m512 scale = _mm512_set1_ps(0.9999999f), shift = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r)
#pragma GCC unroll 16  // constant indices: the accumulators live in registers, not memory
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], scale, shift);
  __m512 total = acc[0];
  for (int i = 1; i < kChains; ++i) total = _mm512_add_ps(total, acc[i]);
  // Summed through memory: g++ 12 warns falsely inside _mm512_reduce_add_ps.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  return sum_of(lanes, 16);
}

__attribute__((target("avx2,fma"))) float chains_avx2(int64_t rounds) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(1.0f + 0.001f * static_cast<float>(i));
  const __m256 scale = _mm256_set1_ps(0.9999999f), shift = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r)
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], scale, shift);
  __m256 total = acc[0];
  for (int i = 1; i < kChains; ++i) total = _mm256_add_ps(total, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, total);
  return sum_of(lanes, 8);
}

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// GFLOP/s of `chains` run for `rounds` rounds of `lanes`-wide FMAs (2 flops each), best of 5.
template <class Chains>
double best_rate(Chains chains, int lanes) {
  constexpr int64_t kRounds = 20'000'000;  // ~0.1 s per run at today's clock rates
  volatile float sink = 0;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const double start = thread_cpu_seconds();
    sink = sink + chains(kRounds);
    const double seconds = thread_cpu_seconds() - start;
    const double flops = 2.0 * lanes * kChains * static_cast<double>(kRounds);
    best = std::max(best, flops / seconds / 1e9);
  }
  return best;
}
#endif  // __x86_64__

double measure() {
  double peak = 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) peak = best_rate(chains_avx2, 8);
  if (__builtin_cpu_supports("avx512f")) peak = std::max(peak, best_rate(chains_avx512, 16));
#endif
  return peak;
}

}  // namespace

double fma_peak_gflops() {
  static const double peak = measure();
  return peak;
}

}  // namespace bench
