// Square float32 matmul through Tessera (dispatch + CPU plugin, which computes every element as its
// own chain of fused multiply-adds, cutting large products into panels it runs on its own threads)
// against calling cblas_sgemm directly on preallocated buffers with the same number of OpenBLAS threads.
// Arguments: n (the matrices are n x n) and threads (the backend's kernel thread count, set as the
// host does through tessera_backend set_num_threads; for cblas, openblas_set_num_threads).
// Target: Tessera / cblas <= 1.05 at n = 1024 for the same thread count.
// BM_TesseraMatmulOnOneCore: one kernel thread, timed on the CPU clock (so a busy machine does not
// lower it), against this machine's one-core FMA peak measured in the same run (fma_peak.hpp):
// counter "of_fma_peak". Target: >= 0.90 at n = 1024.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <vector>

#include <tessera/tessera.hpp>

#include "dispatch/backends.hpp"
#include "fma_peak.hpp"

namespace ts = tessera;

namespace {

double flops(int64_t n) {
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
}

// Times matmul of two n x n tensors on `threads` kernel threads and sets the GFLOP/s counter (a rate
// over real time or CPU time, as the benchmark is registered).
void time_products(benchmark::State& state, int64_t n, int32_t threads) {
  ts::Generator g(1);
  const ts::Tensor a = ts::rand({n, n}, g);
  const ts::Tensor b = ts::rand({n, n}, g);
  ts::dispatch::set_backend_threads(threads);
  for (auto _ : state) {
    ts::Tensor c = ts::matmul(a, b);
    benchmark::DoNotOptimize(c.impl().get());
  }
  ts::dispatch::set_backend_threads(0);
  state.counters["GFLOP/s"] = benchmark::Counter(flops(n), benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

void BM_TesseraMatmul(benchmark::State& state) {
  time_products(state, state.range(0), static_cast<int32_t>(state.range(1)));
}

void BM_TesseraMatmulOnOneCore(benchmark::State& state) {
  const int64_t n = state.range(0);
  const double peak = bench::fma_peak_gflops();
  // Registered without UseRealTime: the rate counters divide by CPU time, as the peak does.
  time_products(state, n, 1);
  state.counters["fma_peak_GFLOP/s"] = peak;
  state.counters["of_fma_peak"] = benchmark::Counter(peak > 0 ? flops(n) / (peak * 1e9) : 0,
                                                     benchmark::Counter::kIsIterationInvariantRate);
}

void BM_CblasSgemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(static_cast<size_t>(n) * n, 0.25f),
      c(static_cast<size_t>(n) * n);
  // Process-wide: the CPU plugin pins OpenBLAS to 1 thread when it loads, so put that back after.
  openblas_set_num_threads(static_cast<int>(state.range(1)));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f,
                c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  openblas_set_num_threads(1);
  state.counters["GFLOP/s"] = benchmark::Counter(flops(n), benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

}  // namespace

BENCHMARK(BM_TesseraMatmul)
    ->ArgsProduct({{256, 512, 1024, 2048}, {1, 2}})
    ->ArgNames({"n", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TesseraMatmulOnOneCore)->Arg(512)->Arg(1024)->ArgNames({"n"})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CblasSgemm)
    ->ArgsProduct({{256, 512, 1024, 2048}, {1, 2}})
    ->ArgNames({"n", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
