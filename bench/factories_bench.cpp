// What making a tensor costs when the kernel work is negligible: the factory's own path (options,
// backend, allocation, LocalMode check).
//   BM_ZerosCpu        zeros({4}) on the backend named "cpu"
//   BM_ZerosDefault    zeros({4}) on the default backend (no name given)
//   BM_LocalZeros/N    zeros({4}) inside a LocalMode of N ranks: one local tensor of N shards
//   BM_ZerosLike       zeros_like of a 4-element cpu tensor (the backend comes from the argument)
#include <benchmark/benchmark.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

static void BM_ZerosCpu(benchmark::State& state) {
  const ts::TensorOptions cpu = ts::TensorOptions().backend("cpu");
  for (auto _ : state) {
    ts::Tensor t = ts::zeros({4}, cpu);
    benchmark::DoNotOptimize(t.impl().get());
  }
}
BENCHMARK(BM_ZerosCpu);

static void BM_ZerosDefault(benchmark::State& state) {
  for (auto _ : state) {
    ts::Tensor t = ts::zeros({4});
    benchmark::DoNotOptimize(t.impl().get());
  }
}
BENCHMARK(BM_ZerosDefault);

static void BM_ZerosLike(benchmark::State& state) {
  const ts::Tensor like = ts::ones({4});
  for (auto _ : state) {
    ts::Tensor t = ts::zeros_like(like);
    benchmark::DoNotOptimize(t.impl().get());
  }
}
BENCHMARK(BM_ZerosLike);

static void BM_LocalZeros(benchmark::State& state) {
  ts::LocalMode mode(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    ts::Tensor t = ts::zeros({4});
    benchmark::DoNotOptimize(t.local_impl().get());
  }
  state.counters["per_rank_ns"] =
      benchmark::Counter(static_cast<double>(state.range(0)),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LocalZeros)->Arg(8);

BENCHMARK_MAIN();
