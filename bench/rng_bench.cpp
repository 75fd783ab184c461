// Random tensors per sample: randn (the normal transform) and rand (uniform) of 1M elements on one
// kernel thread, float32 and float64, as ns per sample (items_per_second inverted by hand, or read
// the "ns/sample" counter), comparable with PyTorch's CPU randn per sample.
#include <benchmark/benchmark.h>

#include <tessera/tessera.hpp>

#include "dispatch/backends.hpp"

namespace ts = tessera;

namespace {

constexpr int64_t kSamples = 1 << 20;

template <class Draw>
void per_sample(benchmark::State& state, const Draw& draw) {
  ts::dispatch::set_backend_threads(static_cast<int32_t>(state.range(0)));
  ts::Generator g(1234);
  for (auto _ : state) {
    ts::Tensor t = draw(g);
    benchmark::DoNotOptimize(t.impl().get());
  }
  ts::dispatch::set_backend_threads(0);
  state.counters["ns/sample"] = benchmark::Counter(static_cast<double>(state.iterations() * kSamples),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_RandnFloat32(benchmark::State& state) {
  per_sample(state, [](ts::Generator& g) { return ts::randn({kSamples}, g, ts::kFloat32); });
}
void BM_RandnFloat64(benchmark::State& state) {
  per_sample(state, [](ts::Generator& g) { return ts::randn({kSamples}, g, ts::kFloat64); });
}
void BM_RandFloat32(benchmark::State& state) {
  per_sample(state, [](ts::Generator& g) { return ts::rand({kSamples}, g, ts::kFloat32); });
}

}  // namespace

// Argument: the backend's kernel thread count (1: the single-thread number).
BENCHMARK(BM_RandnFloat32)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RandnFloat64)->Arg(1)->ArgName("threads")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RandFloat32)->Arg(1)->ArgName("threads")->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
