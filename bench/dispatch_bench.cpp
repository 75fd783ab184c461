// Dispatch overhead: a 1-element float add through the full path (promotion, broadcast, output
// allocation, kernel lookup, plugin call) against a hand-written loop that does the same arithmetic.
#include <benchmark/benchmark.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

static void BM_TesseraAdd1(benchmark::State& state) {
  ts::Tensor a = ts::ones({1});
  ts::Tensor b = ts::ones({1});
  for (auto _ : state) {
    ts::Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl().get());
  }
}
BENCHMARK(BM_TesseraAdd1);

static void BM_TesseraAddScalar1(benchmark::State& state) {
  ts::Tensor a = ts::ones({1});
  for (auto _ : state) {
    ts::Tensor c = a + 1.0f;
    benchmark::DoNotOptimize(c.impl().get());
  }
}
BENCHMARK(BM_TesseraAddScalar1);

// The baseline: allocate a one-element result and add, as the op does, without dispatch.
static void BM_HandLoopAdd1(benchmark::State& state) {
  float a[1] = {1.f};
  float b[1] = {1.f};
  for (auto _ : state) {
    auto* c = new float[1];
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
    for (int i = 0; i < 1; ++i) c[i] = a[i] + b[i];
    benchmark::DoNotOptimize(c);
    delete[] c;
  }
}
BENCHMARK(BM_HandLoopAdd1);

BENCHMARK_MAIN();
