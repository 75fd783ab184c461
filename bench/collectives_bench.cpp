// Simulated all_reduce of 64 MiB float32 per rank on 8 ranks, per algorithm, against a plain
// memcpy of the same bytes on this machine. "bytes_per_second" counts the bytes the algorithm
// moves between ranks (its messages), so algorithms are compared on the work they really do.
// Target: every algorithm within 2x of memcpy, in steady state (after the first call).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {
constexpr int kRanks = 8;
constexpr int64_t kElements = 64 * 1024 * 1024 / 4;

// Bytes sent between ranks by one all_reduce of n bytes per rank on p ranks.
double message_bytes(const std::string& algorithm, double n, double p) {
  if (algorithm == "direct") return p * (p - 1) * n;  // everyone sends everything to everyone
  if (algorithm == "ring" || algorithm == "rabenseifner")
    return 2 * (p - 1) * n;                            // 2(p-1) chunks of n/p per rank
  if (algorithm == "rd") return p * std::log2(p) * n;  // log p full exchanges per rank
  if (algorithm == "tree") return 2 * (p - 1) * n;     // reduce then broadcast over p-1 edges
  return 0;
}
}  // namespace

static void BM_AllReduce64MiB(benchmark::State& state, const std::string& algorithm) {
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce:" + algorithm + ";*:direct");
  std::vector<std::pair<int, ts::Tensor>> shards;
  ts::Generator g(1);
  for (int r = 0; r < kRanks; ++r) shards.emplace_back(r, ts::rand({kElements}, g));
  ts::Tensor t = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
  // The first call builds the schedule and its plan and touches its scratch memory for the first
  // time: reported apart ("first_call_ms"), as memcpy's own first touch is not in its figure either
  // (on the VMs this runs on, touching a fresh GiB can take seconds).
  const auto first_start = std::chrono::steady_clock::now();
  ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  const double first_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - first_start).count();
  for (auto _ : state) ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  state.counters["first_call_ms"] = first_ms;
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * message_bytes(algorithm, kElements * 4.0, kRanks)));
  ts::dist::set_algorithms(saved);
}
BENCHMARK_CAPTURE(BM_AllReduce64MiB, direct, std::string("direct"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);
BENCHMARK_CAPTURE(BM_AllReduce64MiB, ring, std::string("ring"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);
BENCHMARK_CAPTURE(BM_AllReduce64MiB, tree, std::string("tree"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);
BENCHMARK_CAPTURE(BM_AllReduce64MiB, rd, std::string("rd"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);
BENCHMARK_CAPTURE(BM_AllReduce64MiB, rabenseifner, std::string("rabenseifner"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);

// A small all_reduce over many simulated ranks costs its reductions, not its p^2 or
// p log p messages. Targets (steady state, after the first call built the schedule and its plan):
// 1024 ranks <= 1 ms with the default rules and <= 5 ms with any algorithm; 4096 ranks <= 5 ms.
// "first_call_ms" is the first call (schedule build, verification, plan, one evaluation; for direct
// the plan alone, written in closed form); "build_ms" is building and verifying the schedule alone
// (verify_schedule, which checks every message of any algorithm).
static void BM_AllReduceSmallManyRanks(benchmark::State& state, const std::string& algorithm) {
  const int ranks = static_cast<int>(state.range(0));
  constexpr int64_t kCount = 16;
  const std::string saved = ts::dist::algorithms();
  if (!algorithm.empty()) ts::dist::set_algorithms("all_reduce:" + algorithm + ";*:direct");
  std::vector<std::pair<int, ts::Tensor>> shards;
  ts::Generator g(2);
  for (int r = 0; r < ranks; ++r) shards.emplace_back(r, ts::rand({kCount}, g));
  ts::Tensor t = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
  // Google Benchmark runs this function more than once; only its first run sees a cold cache.
  static std::map<std::pair<std::string, int>, std::pair<double, double>> first_runs;
  if (!first_runs.count({algorithm, ranks})) {
    using Clock = std::chrono::steady_clock;
    const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    const auto build_start = Clock::now();
    if (!algorithm.empty()) (void)ts::dist::verify_schedule(algorithm, "all_reduce", ranks, kCount);
    const auto first_start = Clock::now();
    ts::dist::all_reduce(t, ts::ReduceOp::SUM);
    first_runs[{algorithm, ranks}] = {ms(Clock::now() - first_start), ms(first_start - build_start)};
  }
  for (auto _ : state) ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  state.counters["first_call_ms"] = first_runs[{algorithm, ranks}].first;
  if (!algorithm.empty()) state.counters["build_ms"] = first_runs[{algorithm, ranks}].second;
  ts::dist::set_algorithms(saved);
}
BENCHMARK_CAPTURE(BM_AllReduceSmallManyRanks, default_rules, std::string())
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduceSmallManyRanks, direct, std::string("direct"))
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduceSmallManyRanks, ring, std::string("ring"))
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduceSmallManyRanks, tree, std::string("tree"))
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduceSmallManyRanks, rd, std::string("rd"))
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduceSmallManyRanks, rabenseifner, std::string("rabenseifner"))
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The first call of a small all_gather, reduce_scatter or all_to_all over 1024 simulated ranks, per
// algorithm: schedule build, verification and plan, or the plan alone where the algorithm's plan is
// written in closed form. Target: <= 50 ms for every shipped algorithm. "first_call_ms" is that call;
// the timed loop is the steady state after it. Run one case alone (--benchmark_filter) for its peak
// memory: the first call is what holds p^2 steps at once.
static void BM_FirstCallManyRanks(benchmark::State& state, const std::string& collective,
                                  const std::string& algorithm) {
  const int ranks = static_cast<int>(state.range(0));
  constexpr int64_t kBlock = 4;  // elements per rank's block
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms(collective + ":" + algorithm + ";*:direct");
  // Inputs of one block (all_gather) or one block per rank (reduce_scatter, all_to_all), outputs of
  // one block (reduce_scatter) or one per rank.
  const int64_t input = collective == "all_gather" ? kBlock : kBlock * ranks;
  const int64_t output = collective == "reduce_scatter" ? kBlock : kBlock * ranks;
  std::vector<std::pair<int, ts::Tensor>> in, out;
  ts::Generator g(3);
  for (int r = 0; r < ranks; ++r) {
    in.emplace_back(r, ts::rand({input}, g));
    out.emplace_back(r, ts::zeros({output}));
  }
  const ts::Tensor t = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(in)));
  ts::Tensor result = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(out)));
  auto call = [&] {
    if (collective == "all_gather")
      ts::dist::all_gather_into_tensor(result, t);
    else if (collective == "reduce_scatter")
      ts::dist::reduce_scatter_tensor(result, t);
    else
      ts::dist::all_to_all_single(result, t);
  };
  // Google Benchmark runs this function more than once; only its first run sees a cold cache.
  static std::map<std::pair<std::string, int>, double> first_runs;
  const std::pair<std::string, int> key{collective + ":" + algorithm, ranks};
  if (!first_runs.count(key)) {
    const auto start = std::chrono::steady_clock::now();
    call();
    first_runs[key] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  for (auto _ : state) call();
  state.counters["first_call_ms"] = first_runs[key];
  ts::dist::set_algorithms(saved);
}
#define FIRST_CALL_CASE(collective, algorithm)                                                 \
  BENCHMARK_CAPTURE(BM_FirstCallManyRanks, collective##_##algorithm, std::string(#collective), \
                    std::string(#algorithm))                                                   \
      ->Arg(1024)                                                                              \
      ->Unit(benchmark::kMillisecond)                                                          \
      ->UseRealTime()
FIRST_CALL_CASE(all_gather, direct);
FIRST_CALL_CASE(all_gather, ring);
FIRST_CALL_CASE(all_gather, rd);
FIRST_CALL_CASE(all_gather, bruck);
FIRST_CALL_CASE(reduce_scatter, direct);
FIRST_CALL_CASE(reduce_scatter, ring);
FIRST_CALL_CASE(reduce_scatter, rd);
FIRST_CALL_CASE(all_to_all, direct);
FIRST_CALL_CASE(all_to_all, bruck);
#undef FIRST_CALL_CASE

static void BM_Memcpy64MiB(benchmark::State& state) {
  std::vector<char> src(kElements * 4, 1), dst(kElements * 4);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * src.size()));
}
BENCHMARK(BM_Memcpy64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
