// The simulator's hot path: how much a local op costs beyond the dense ops it runs per rank.
//   BM_LocalAdd1/N   one local add of 1-element shards over N ranks
//   BM_DenseAdds1/N  N dense adds of 1-element tensors (what the local add does underneath)
//   overhead per rank per op = (LocalAdd1 - DenseAdds1) / N           target: < 1 us
//   BM_LocalMatmul512/T  a local 512x512 float32 matmul on 8 ranks with T rank threads
//   BM_DenseMatmuls512   8 dense matmuls          target: T=1 no slower, T=2 faster
#include <benchmark/benchmark.h>

#include <vector>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {
ts::Tensor local_of(int ranks, const ts::Tensor& shard) {
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < ranks; ++r) shards.emplace_back(r, shard.clone());
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
}
}  // namespace

static void BM_LocalAdd1(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  ts::Tensor a = local_of(ranks, ts::ones({1}));
  ts::Tensor b = local_of(ranks, ts::ones({1}));
  for (auto _ : state) {
    ts::Tensor c = a + b;
    benchmark::DoNotOptimize(c.local_impl().get());
  }
  state.counters["per_rank_ns"] =
      benchmark::Counter(static_cast<double>(ranks),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LocalAdd1)->Arg(8)->Arg(64);

static void BM_DenseAdds1(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  std::vector<ts::Tensor> a(ranks, ts::ones({1})), b(ranks, ts::ones({1}));
  for (auto _ : state) {
    for (int r = 0; r < ranks; ++r) {
      ts::Tensor c = a[r] + b[r];
      benchmark::DoNotOptimize(c.impl().get());
    }
  }
  state.counters["per_rank_ns"] =
      benchmark::Counter(static_cast<double>(ranks),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DenseAdds1)->Arg(8)->Arg(64);

static void BM_LocalMatmul512(benchmark::State& state) {
  ts::set_threads(static_cast<int>(state.range(0)));
  ts::Generator g(1);
  ts::Tensor a = local_of(8, ts::rand({512, 512}, g));
  ts::Tensor b = local_of(8, ts::rand({512, 512}, g));
  for (auto _ : state) {
    ts::Tensor c = ts::matmul(a, b);
    benchmark::DoNotOptimize(c.local_impl().get());
  }
  ts::set_threads(0);
}
BENCHMARK(BM_LocalMatmul512)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_DenseMatmuls512(benchmark::State& state) {
  ts::Generator g(1);
  std::vector<ts::Tensor> a, b;
  for (int r = 0; r < 8; ++r) {
    a.push_back(ts::rand({512, 512}, g));
    b.push_back(ts::rand({512, 512}, g));
  }
  for (auto _ : state) {
    for (int r = 0; r < 8; ++r) {
      ts::Tensor c = ts::matmul(a[r], b[r]);
      benchmark::DoNotOptimize(c.impl().get());
    }
  }
}
BENCHMARK(BM_DenseMatmuls512)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
