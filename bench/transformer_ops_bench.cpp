// Forward time of the transformer ops a Llama/GPT step is made of, float32 on one kernel thread,
// each against a straightforward loop written here (plain C++ over float arrays, built with the
// project's flags and the vectoriser settings the CPU backend's kernels get), and the bfloat16
// conversions against memcpy.
//
//   BM_LayerNorm            ts::layer_norm(x, {512}, w, b, 1e-5), x [1024, 512] (batch 4 x seq 256).
//   BM_RmsNorm              ts::rms_norm(x, {512}, w, 1e-5), same x. The loop: per row the mean (and,
//                           for layer_norm, the biased variance) or the mean square, then one pass that
//                           normalises and scales.
//   BM_Attention/causal     ts::scaled_dot_product_attention(q, k, v, {}, 0.0, causal) with q, k, v
//                           [4, 8, 256, 64] (batch, heads, seq, head dim). The loop: per (batch,
//                           head, query) the scores over the keys it may see (j <= i when causal),
//                           their max, exp and sum, then the weighted sum of value rows; one pass per
//                           query, float accumulation.
//   BM_ToBFloat16           t.to(kBFloat16) of a 64 MiB float32 tensor (reads 64 MiB, writes 32 MiB).
//   BM_FromBFloat16         the 32 MiB bfloat16 result .to(kFloat32) (reads 32 MiB, writes 64 MiB).
//
// How to read it:
//   Time                    the Tessera op alone (manual time), per call.
//   x_loop                  Tessera time / loop time, both timed in every iteration of the same run
//                           (1.0 = as fast as the plain loop; above 1 = Tessera is slower).
//   loop_ms                 the loop's own time per call.
//   bytes_per_second        (conversions) bytes read + written per second by Tessera's conversion.
//   x_memcpy                conversion time / the time of a std::memcpy that moves as many bytes (a
//                           memcpy of 48 MiB reads 48 and writes 48: the 96 MiB a conversion moves),
//                           both timed in every iteration; 1.0 = the conversion runs at copy speed.
//   memcpy_bytes_per_second the yardstick's own bandwidth.
// Each benchmark checks once, before timing, that Tessera's result matches the loop's (the norms
// and attention: within 1e-4 relative + 1e-5 absolute; the conversions: bit for bit against a
// round-to-nearest-even written here) and reports an error otherwise.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "dispatch/backends.hpp"

namespace ts = tessera;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kRows = 4 * 256, kDim = 512;                        // the norms' input
constexpr int64_t kBatch = 4, kHeads = 8, kSeq = 256, kHeadDim = 64;  // attention
constexpr int64_t kConvertElements = (int64_t{64} << 20) / 4;         // 64 MiB of float32
constexpr double kEps = 1e-5;

// Pins the backend's kernels to one thread for a benchmark's lifetime (0 = the default after).
struct OneKernelThread {
  OneKernelThread() { ts::dispatch::set_backend_threads(1); }
  ~OneKernelThread() { ts::dispatch::set_backend_threads(0); }
};

const float* floats_of(const ts::Tensor& t) { return static_cast<const float*>(t.data_ptr()); }

// A sum in kLanes partial sums: a float reduction the vectoriser may turn into vector adds without
// reassociating anything (the order is the one written here).
constexpr int64_t kLanes = 16;
template <class Term>
float lane_sum(int64_t n, const Term& term) {
  float lanes[kLanes] = {};
  const int64_t whole = n - n % kLanes;
  for (int64_t i = 0; i < whole; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += term(i + l);
  float total = 0;
  for (int64_t i = whole; i < n; ++i) total += term(i);
  for (float lane : lanes) total += lane;
  return total;
}

void layer_norm_loop(const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t dim) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    const float mean = lane_sum(dim, [&](int64_t i) { return xr[i]; }) / static_cast<float>(dim);
    const float variance =
        lane_sum(dim, [&](int64_t i) { return (xr[i] - mean) * (xr[i] - mean); }) / static_cast<float>(dim);
    const float inv_std = 1.0f / std::sqrt(variance + static_cast<float>(kEps));
    for (int64_t i = 0; i < dim; ++i) yr[i] = (xr[i] - mean) * inv_std * w[i] + b[i];
  }
}

void rms_norm_loop(const float* x, const float* w, float* y, int64_t rows, int64_t dim) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    const float mean_square =
        lane_sum(dim, [&](int64_t i) { return xr[i] * xr[i]; }) / static_cast<float>(dim);
    const float inv_rms = 1.0f / std::sqrt(mean_square + static_cast<float>(kEps));
    for (int64_t i = 0; i < dim; ++i) yr[i] = xr[i] * inv_rms * w[i];
  }
}

// q, k, v, out: [batch * heads, seq, head_dim], contiguous.
void attention_loop(const float* q, const float* k, const float* v, float* out, bool causal) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  std::vector<float> weights(kSeq);
  float acc[kHeadDim];
  for (int64_t bh = 0; bh < kBatch * kHeads; ++bh) {
    const float* qh = q + bh * kSeq * kHeadDim;
    const float* kh = k + bh * kSeq * kHeadDim;
    const float* vh = v + bh * kSeq * kHeadDim;
    for (int64_t i = 0; i < kSeq; ++i) {
      const float* qi = qh + i * kHeadDim;
      const int64_t keys = causal ? i + 1 : kSeq;
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < keys; ++j) {
        const float* kj = kh + j * kHeadDim;
        weights[j] = lane_sum(kHeadDim, [&](int64_t d) { return qi[d] * kj[d]; }) * scale;
        max = std::max(max, weights[j]);
      }
      float sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        weights[j] = std::exp(weights[j] - max);
        sum += weights[j];
      }
      std::fill(acc, acc + kHeadDim, 0.0f);
      for (int64_t j = 0; j < keys; ++j) {
        const float* vj = vh + j * kHeadDim;
        for (int64_t d = 0; d < kHeadDim; ++d) acc[d] += weights[j] * vj[d];
      }
      float* oi = out + (bh * kSeq + i) * kHeadDim;
      for (int64_t d = 0; d < kHeadDim; ++d) oi[d] = acc[d] / sum;
    }
  }
}

// Empty when every element of `got` is within 1e-4 relative + 1e-5 absolute of `want`; otherwise
// what differs, for SkipWithError.
std::string mismatch(const ts::Tensor& got, const std::vector<float>& want) {
  const std::vector<float> g = got.contiguous().to_vector<float>();
  if (g.size() != want.size())
    return "Tessera gave " + std::to_string(g.size()) + " elements, the loop " + std::to_string(want.size());
  for (size_t i = 0; i < g.size(); ++i)
    if (!(std::abs(g[i] - want[i]) <= 1e-5f + 1e-4f * std::abs(want[i])))
      return "element " + std::to_string(i) + ": Tessera " + std::to_string(g[i]) + ", loop " +
             std::to_string(want[i]);
  return {};
}

// Times `tessera` (the iteration time) and `loop` in every iteration; x_loop is their ratio.
template <class TesseraOp, class LoopOp>
void time_against_loop(benchmark::State& state, const TesseraOp& tessera, const LoopOp& loop) {
  double tessera_seconds = 0, loop_seconds = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    ts::Tensor y = tessera();
    benchmark::DoNotOptimize(y.impl().get());
    const auto middle = Clock::now();
    loop();
    benchmark::ClobberMemory();
    const double elapsed = std::chrono::duration<double>(middle - start).count();
    tessera_seconds += elapsed;
    loop_seconds += std::chrono::duration<double>(Clock::now() - middle).count();
    state.SetIterationTime(elapsed);
  }
  state.counters["x_loop"] = tessera_seconds / loop_seconds;
  state.counters["loop_ms"] = 1e3 * loop_seconds / static_cast<double>(state.iterations());
}

struct NormInputs {
  ts::Tensor x, w, b;
};
NormInputs make_norm_inputs() {
  ts::Generator g(11);
  return {ts::randn({kRows, kDim}, g), ts::randn({kDim}, g), ts::randn({kDim}, g)};
}

}  // namespace

static void BM_LayerNorm(benchmark::State& state) {
  const OneKernelThread one_thread;
  const NormInputs in = make_norm_inputs();
  std::vector<float> y(static_cast<size_t>(kRows * kDim));
  auto tessera = [&] { return ts::layer_norm(in.x, {kDim}, in.w, in.b, kEps); };
  auto loop = [&] {
    layer_norm_loop(floats_of(in.x), floats_of(in.w), floats_of(in.b), y.data(), kRows, kDim);
  };
  loop();
  if (const std::string error = mismatch(tessera(), y); !error.empty())
    return state.SkipWithError(error.c_str());
  time_against_loop(state, tessera, loop);
}
BENCHMARK(BM_LayerNorm)->Unit(benchmark::kMicrosecond)->UseManualTime();

static void BM_RmsNorm(benchmark::State& state) {
  const OneKernelThread one_thread;
  const NormInputs in = make_norm_inputs();
  std::vector<float> y(static_cast<size_t>(kRows * kDim));
  auto tessera = [&] { return ts::rms_norm(in.x, {kDim}, in.w, kEps); };
  auto loop = [&] { rms_norm_loop(floats_of(in.x), floats_of(in.w), y.data(), kRows, kDim); };
  loop();
  if (const std::string error = mismatch(tessera(), y); !error.empty())
    return state.SkipWithError(error.c_str());
  time_against_loop(state, tessera, loop);
}
BENCHMARK(BM_RmsNorm)->Unit(benchmark::kMicrosecond)->UseManualTime();

// Argument: 1 = causal, 0 = no mask.
static void BM_Attention(benchmark::State& state) {
  const OneKernelThread one_thread;
  const bool causal = state.range(0) != 0;
  ts::Generator g(5);
  const ts::Tensor q = ts::randn({kBatch, kHeads, kSeq, kHeadDim}, g);
  const ts::Tensor k = ts::randn({kBatch, kHeads, kSeq, kHeadDim}, g);
  const ts::Tensor v = ts::randn({kBatch, kHeads, kSeq, kHeadDim}, g);
  std::vector<float> out(static_cast<size_t>(kBatch * kHeads * kSeq * kHeadDim));
  auto tessera = [&] { return ts::scaled_dot_product_attention(q, k, v, {}, 0.0, causal); };
  auto loop = [&] { attention_loop(floats_of(q), floats_of(k), floats_of(v), out.data(), causal); };
  loop();
  if (const std::string error = mismatch(tessera(), out); !error.empty())
    return state.SkipWithError(error.c_str());
  time_against_loop(state, tessera, loop);
}
BENCHMARK(BM_Attention)->Arg(1)->Arg(0)->ArgName("causal")->Unit(benchmark::kMillisecond)->UseManualTime();

namespace {

// float32 -> bfloat16 bits, rounding to nearest even (inputs here are finite).
uint16_t bfloat16_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
float from_bfloat16_bits(uint16_t h) {
  const uint32_t bits = uint32_t{h} << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// The float32 value of each element of `x` rounded to bfloat16 (what both conversions must give).
std::vector<float> rounded_to_bfloat16(const ts::Tensor& x) {
  const float* p = floats_of(x);
  std::vector<float> out(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = from_bfloat16_bits(bfloat16_bits(p[i]));
  return out;
}

// Empty when `got` (read as float32) equals `want` bit for bit.
std::string bit_mismatch(const ts::Tensor& got, const std::vector<float>& want) {
  const std::vector<float> g = got.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&g[i], &want[i], sizeof(float)) != 0)
      return "element " + std::to_string(i) + ": Tessera " + std::to_string(g[i]) + ", expected " +
             std::to_string(want[i]);
  return {};
}

// Times `convert` (the iteration time) and a memcpy moving as many bytes in every iteration.
template <class Convert>
void time_against_memcpy(benchmark::State& state, const Convert& convert) {
  constexpr size_t kMoved = size_t{96} << 20;  // 64 MiB float32 + 32 MiB bfloat16, read + written
  std::vector<char> from(kMoved / 2, 1), to(kMoved / 2, 0);
  double convert_seconds = 0, memcpy_seconds = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    ts::Tensor y = convert();
    benchmark::DoNotOptimize(y.impl().get());
    const auto middle = Clock::now();
    std::memcpy(to.data(), from.data(), from.size());
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
    const double elapsed = std::chrono::duration<double>(middle - start).count();
    convert_seconds += elapsed;
    memcpy_seconds += std::chrono::duration<double>(Clock::now() - middle).count();
    state.SetIterationTime(elapsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kMoved));
  state.counters["x_memcpy"] = convert_seconds / memcpy_seconds;
  state.counters["memcpy_bytes_per_second"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(kMoved) / memcpy_seconds,
      benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
}

}  // namespace

static void BM_ToBFloat16(benchmark::State& state) {
  const OneKernelThread one_thread;
  ts::Generator g(3);
  const ts::Tensor x = ts::randn({kConvertElements}, g);
  auto convert = [&] { return x.to(ts::kBFloat16); };
  if (const std::string error = bit_mismatch(convert(), rounded_to_bfloat16(x)); !error.empty())
    return state.SkipWithError(error.c_str());
  time_against_memcpy(state, convert);
}
BENCHMARK(BM_ToBFloat16)->Unit(benchmark::kMillisecond)->UseManualTime();

static void BM_FromBFloat16(benchmark::State& state) {
  const OneKernelThread one_thread;
  ts::Generator g(3);
  const ts::Tensor x = ts::randn({kConvertElements}, g);
  const ts::Tensor h = x.to(ts::kBFloat16);
  auto convert = [&] { return h.to(ts::kFloat32); };
  if (const std::string error = bit_mismatch(convert(), rounded_to_bfloat16(x)); !error.empty())
    return state.SkipWithError(error.c_str());
  time_against_memcpy(state, convert);
}
BENCHMARK(BM_FromBFloat16)->Unit(benchmark::kMillisecond)->UseManualTime();

BENCHMARK_MAIN();
