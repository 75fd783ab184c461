// ts::spawn: what a switch between ranks costs, starting 1024 ranks, and an all_reduce of 16 floats
// over 1024 ranks issued from every rank's program against the same all_reduce on a local tensor.
// Targets: a switch under 100 ns, 1024 ranks started and finished under 10 ms, the per-rank
// all_reduce within 3x of the local tensor's.
//
// The counters (ns_per_handoff, us_per_all_reduce) are plain numbers from the process's CPU time:
// everything runs on the calling thread, and on a machine shared with other work the CPU time is
// what the program spent, where the wall-clock time also counts the time it waited for a core.
#include <benchmark/benchmark.h>

#include <ctime>
#include <tessera/tessera.hpp>
#include <utility>
#include <vector>

namespace ts = tessera;

namespace {
constexpr int kYields = 100000;  // per rank and spawn
constexpr int kRanks = 1024;
constexpr int kRounds = 200;  // all_reduces per rank and spawn

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The process's CPU time from construction to each call of per(), divided among `count` things, in
// `unit`s (1e9: nanoseconds).
class CpuTimer {
 public:
  CpuTimer() : start_(process_cpu_seconds()) {}
  double per(double count, double unit) const { return (process_cpu_seconds() - start_) * unit / count; }

 private:
  double start_;
};
}  // namespace

// Two ranks hand the thread to each other: each yield_rank is one rank -> scheduler -> other rank
// handoff (two coroutine switches and the exchange of the ranks' per-thread scopes).
static void BM_SpawnYield(benchmark::State& state) {
  const CpuTimer cpu;
  for (auto _ : state)
    ts::spawn(2, [](int) {
      for (int i = 0; i < kYields; ++i) ts::yield_rank();
    });
  state.counters["ns_per_handoff"] = cpu.per(static_cast<double>(state.iterations()) * 2 * kYields, 1e9);
}
BENCHMARK(BM_SpawnYield)->Unit(benchmark::kMillisecond)->UseRealTime();

// Starting and finishing 1024 ranks whose programs do nothing (stacks, coroutines, the world).
static void BM_Spawn1024(benchmark::State& state) {
  const CpuTimer cpu;
  for (auto _ : state) ts::spawn(kRanks, [](int) {});
  state.counters["ms_per_spawn"] = cpu.per(static_cast<double>(state.iterations()), 1e3);
}
BENCHMARK(BM_Spawn1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// kRounds all_reduces of 16 floats in every rank's program, reported per all_reduce. Like the local
// tensor's case below, whose shards and mode are made before its clock starts, what the program does
// around its all_reduces (starting 1024 ranks, making each rank's tensor) is not counted: the same
// program without the all_reduces runs in every iteration too, and its time is taken off.
static void BM_AllReduce16_Spawn1024(benchmark::State& state) {
  auto program = [](int rounds) {
    return [rounds](int rank) {
      ts::Tensor t = ts::full({16}, static_cast<float>(rank));
      for (int i = 0; i < rounds; ++i) ts::dist::all_reduce(t);
      benchmark::DoNotOptimize(t);
    };
  };
  double without = 0, with = 0;  // CPU seconds: the program without its all_reduces, and with them
  for (auto _ : state) {
    const double start = process_cpu_seconds();
    ts::spawn(kRanks, program(0));
    const double middle = process_cpu_seconds();
    ts::spawn(kRanks, program(kRounds));
    const double end = process_cpu_seconds();
    without += middle - start;
    with += end - middle;
  }
  const double all_reduces = static_cast<double>(state.iterations()) * kRounds;
  state.counters["us_per_all_reduce"] = (with - without) * 1e6 / all_reduces;
  state.counters["start_ms"] = without * 1e3 / static_cast<double>(state.iterations());
}
BENCHMARK(BM_AllReduce16_Spawn1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same all_reduce on a local tensor of 1024 ranks (LocalMode's way).
static void BM_AllReduce16_Local1024(benchmark::State& state) {
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < kRanks; ++r) shards.emplace_back(r, ts::full({16}, static_cast<float>(r)));
  ts::Tensor t = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
  ts::LocalMode mode(kRanks);  // the same world size as the spawn's
  const CpuTimer cpu;
  for (auto _ : state) {
    for (int i = 0; i < kRounds; ++i) ts::dist::all_reduce(t);
  }
  state.counters["us_per_all_reduce"] = cpu.per(static_cast<double>(state.iterations()) * kRounds, 1e6);
}
BENCHMARK(BM_AllReduce16_Local1024)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
