// Autograd costs:
//   BM_TpMlpStep/mode     a Megatron TP MLP step on a 1-d mesh of 4 ranks (x replicated and
//                         requiring grad, w1 Shard(1), w2 Shard(0), batch 64, 512 -> 1024 -> 512,
//                         float32). mode 0 times the forward alone (recording), mode 1 forward +
//                         backward. Counter backward_over_forward = (fwd+bwd - fwd) / fwd, both
//                         timed in every iteration of the same run (target: at most 2.5).
//   BM_Bookkeeping/ranks  one mul of 1-element tensors on a local tensor of `ranks` ranks (1 =
//                         a dense tensor) with an input that requires grad, against the same mul
//                         without: counter ns_per_op_per_rank = the difference per rank (target:
//                         at most 200 ns).
#include <benchmark/benchmark.h>

#include <chrono>
#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

ts::Tensor replicated(const ts::Tensor& t, int ranks) {
  ts::RankMap<ts::Tensor> shards;
  for (int r = 0; r < ranks; ++r) shards.set(r, t);
  return ts::local_tensor(std::move(shards));
}
}  // namespace

static void BM_TpMlpStep(benchmark::State& state) {
  const bool with_backward = state.range(0) == 1;
  ts::Generator g(7);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4}, {"tp"});
  ts::Tensor x_local = replicated(ts::randn({64, 512}, g), 4).set_requires_grad(true);
  const ts::DTensor x = ts::from_local(x_local, mesh, {ts::Replicate()});
  ts::DTensor w1 =
      ts::distribute_tensor(ts::randn({512, 1024}, g) / 16, mesh, {ts::Shard(1)}).set_requires_grad(true);
  ts::DTensor w2 =
      ts::distribute_tensor(ts::randn({1024, 512}, g) / 32, mesh, {ts::Shard(0)}).set_requires_grad(true);
  auto forward = [&] {
    return ts::sum(ts::matmul(ts::relu(ts::matmul(x, w1)), w2).redistribute({ts::Replicate()}));
  };
  double forward_seconds = 0, step_seconds = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    ts::DTensor loss = forward();
    forward_seconds += seconds_since(start);
    if (with_backward) {
      loss.backward();
      step_seconds += seconds_since(start);
    }
    w1.zero_grad();
    w2.zero_grad();
    x_local.zero_grad();
    benchmark::DoNotOptimize(loss.to_local().local_impl().get());
  }
  if (with_backward)
    state.counters["backward_over_forward"] = (step_seconds - forward_seconds) / forward_seconds;
}
BENCHMARK(BM_TpMlpStep)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Bookkeeping(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const ts::Tensor one = ts::ones({1});
  ts::Tensor tracked = ranks == 1 ? one.clone() : replicated(one, ranks);
  tracked.set_requires_grad(true);
  const ts::Tensor untracked = tracked.detach();
  const ts::Tensor other = ranks == 1 ? ts::full({1}, 2.0) : replicated(ts::full({1}, 2.0), ranks);
  double with_grad = 0, without_grad = 0;
  int64_t ops = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    ts::Tensor a = ts::mul(tracked, other);
    with_grad += seconds_since(start);
    start = Clock::now();
    ts::Tensor b = ts::mul(untracked, other);
    without_grad += seconds_since(start);
    ++ops;
    benchmark::DoNotOptimize(a.defined() && b.defined());
  }
  state.counters["ns_per_op_per_rank"] = (with_grad - without_grad) * 1e9 / static_cast<double>(ops * ranks);
  state.counters["ns_per_op_recorded"] = with_grad * 1e9 / static_cast<double>(ops);
}
BENCHMARK(BM_Bookkeeping)->Arg(1)->Arg(8)->Arg(64)->UseRealTime();

BENCHMARK_MAIN();
