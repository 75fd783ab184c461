// 1024x1024 float32 matmul through Tessera (dispatch + CPU plugin + OpenBLAS) against calling
// cblas_sgemm directly on preallocated buffers. Target: ratio <= 1.05.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <vector>

#include <tessera/tessera.hpp>

namespace ts = tessera;
constexpr int kN = 1024;

static void BM_TesseraMatmul1024(benchmark::State& state) {
  ts::Generator g(1);
  ts::Tensor a = ts::rand({kN, kN}, g);
  ts::Tensor b = ts::rand({kN, kN}, g);
  for (auto _ : state) {
    ts::Tensor c = ts::matmul(a, b);
    benchmark::DoNotOptimize(c.impl().get());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kN * kN * kN, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}
BENCHMARK(BM_TesseraMatmul1024)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_CblasSgemm1024(benchmark::State& state) {
  std::vector<float> a(kN * kN, 0.5f), b(kN * kN, 0.25f), c(kN * kN);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.f, a.data(), kN, b.data(), kN, 0.f,
                c.data(), kN);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kN * kN * kN, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}
BENCHMARK(BM_CblasSgemm1024)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
