// Forward pass of a 2-layer MLP, y = relu(x @ w1 + b1) @ w2 (batch 64, in 1024, hidden 1024,
// out 1024, float32), plain against Megatron-style tensor parallelism on a (4,2) (dp,tp) mesh of
// 8 simulated ranks:
//   x  [64,1024]   [S(0),R]   batch split over dp
//   w1 [1024,1024] [R,S(1)]   column-parallel: h = relu(x @ w1 + b1) is [S(0),S(1)], no communication
//   b1 [1024]      [R,S(0)]   follows h's columns
//   w2 [1024,1024] [R,S(0)]   row-parallel: h @ w2 is [S(0),P(sum)], still no communication
//   .full_tensor()            all_reduce over tp, then all_gather over dp: the only communication
//
// How to read it:
//   BM_MlpPlain              the forward on plain dense tensors (one process, one "device").
//   BM_MlpTensorParallel/T   the same forward as DTensors (T rank threads), including the final
//                            full_tensor(). The 8 ranks together do the plain FLOPs (each 1/8),
//                            so the gap is the simulator's cost: sharding propagation, the
//                            collectives and per-rank dispatch.
//   x_plain                  counter: tensor-parallel time / plain time, both timed in every
//                            iteration of the same run (1.0 = no overhead; can drop below 1 when
//                            rank threads run the per-rank matmuls in parallel).
// Each benchmark checks once, before timing, that the parallel result matches the plain one
// (allclose 1e-4) and reports an error otherwise.
#include <benchmark/benchmark.h>

#include <chrono>
#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {
constexpr int64_t kBatch = 64, kIn = 1024, kHidden = 1024, kOut = 1024;

struct Weights {
  ts::Tensor x, w1, b1, w2;
};
Weights make_weights() {
  auto off = ts::maybe_disable_local_mode();
  ts::Generator g(2024);
  // Scaled so that activations stay O(1) (the comparison tolerance is relative).
  return {ts::randn({kBatch, kIn}, g), ts::randn({kIn, kHidden}, g) / 32, ts::randn({kHidden}, g),
          ts::randn({kHidden, kOut}, g) / 32};
}
ts::Tensor plain_forward(const Weights& p) {
  return ts::matmul(ts::relu(ts::matmul(p.x, p.w1) + p.b1), p.w2);
}
}  // namespace

static void BM_MlpPlain(benchmark::State& state) {
  const Weights p = make_weights();
  for (auto _ : state) {
    ts::Tensor y = plain_forward(p);
    benchmark::DoNotOptimize(y.impl().get());
  }
}
BENCHMARK(BM_MlpPlain)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_MlpTensorParallel(benchmark::State& state) {
  ts::set_threads(static_cast<int>(state.range(0)));
  const Weights p = make_weights();
  const ts::Tensor expected = plain_forward(p);

  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  const ts::DTensor x = ts::distribute_tensor(p.x, mesh, {ts::Shard(0), ts::Replicate()});
  const ts::DTensor w1 = ts::distribute_tensor(p.w1, mesh, {ts::Replicate(), ts::Shard(1)});
  const ts::DTensor b1 = ts::distribute_tensor(p.b1, mesh, {ts::Replicate(), ts::Shard(0)});
  const ts::DTensor w2 = ts::distribute_tensor(p.w2, mesh, {ts::Replicate(), ts::Shard(0)});
  auto forward = [&] { return ts::matmul(ts::relu(ts::matmul(x, w1) + b1), w2).full_tensor(); };

  if (!ts::allclose(forward().reconcile(), expected, 1e-4, 1e-4)) {
    state.SkipWithError("tensor-parallel forward differs from the plain one");
    ts::set_threads(0);
    return;
  }
  // Each iteration also times the plain forward, untimed for the benchmark (manual time), so the
  // ratio compares the two under the same machine load.
  using Clock = std::chrono::steady_clock;
  double parallel_seconds = 0, plain_seconds = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    ts::Tensor y = forward();
    benchmark::DoNotOptimize(y.local_impl().get());
    const auto middle = Clock::now();
    ts::Tensor plain = plain_forward(p);
    benchmark::DoNotOptimize(plain.impl().get());
    const double elapsed = std::chrono::duration<double>(middle - start).count();
    parallel_seconds += elapsed;
    plain_seconds += std::chrono::duration<double>(Clock::now() - middle).count();
    state.SetIterationTime(elapsed);
  }
  state.counters["x_plain"] = parallel_seconds / plain_seconds;
  ts::set_threads(0);
}
BENCHMARK(BM_MlpTensorParallel)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseManualTime();

BENCHMARK_MAIN();
