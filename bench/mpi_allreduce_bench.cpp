// all_reduce across processes: Tessera's ring and recursive-doubling schedules over transport-mpi
// against MPI_Allreduce itself, in one run (same processes, same buffers' sizes, same moment).
//
//   mpirun -np 2 ./bench_mpi_allreduce      (and -np 4; add --allow-run-as-root --oversubscribe
//                                            in a root container)
//
// Every process runs every benchmark with the same fixed iteration count (a collective needs every
// process in step; Google Benchmark's adaptive counts would differ per process); process 0 reports.
// Each all_reduce runs kRepetitions times and the ratios to MPI_Allreduce are printed from the
// medians: on a shared 2-core machine one run of a few milliseconds swings by half.
// Then the MLP step of examples/mpi: 2 processes x 4 ranks against 8 simulated ranks.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "mlp_step.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;

namespace {

struct Size {
  const char* name;
  int64_t floats;
  int iterations;
};
const Size kSizes[] = {{"1KiB", 256, 2000}, {"1MiB", 256 * 1024, 100}, {"64MiB", 16 * 1024 * 1024, 6}};
constexpr int kRepetitions = 7;
const char* const kAlgorithms[] = {"ring", "rd"};

void tessera_all_reduce(benchmark::State& state, const ts::World& world, const std::string& algorithm,
                        int64_t floats) {
  const std::string rules_before = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce:" + algorithm);
  ts::LocalMode mode(world);
  ts::Tensor x = ts::rank_map([&](int r) { return ts::full({floats}, static_cast<float>(r + 1)); });
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto _ : state) ts::dist::all_reduce(x);
  state.SetBytesProcessed(state.iterations() * floats * 4);
  ts::dist::set_algorithms(rules_before);
}

void mpi_all_reduce(benchmark::State& state, int64_t floats) {
  std::vector<float> in(static_cast<size_t>(floats), 1.0f), out(static_cast<size_t>(floats));
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto _ : state)
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(floats), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  state.SetBytesProcessed(state.iterations() * floats * 4);
}

// The MLP step of examples/mpi in `world` (hybrid, or simulated in this process).
void mlp(benchmark::State& state, const ts::World& world) {
  const mpi_example::MlpInputs inputs = mpi_example::mlp_inputs(256, 512, 2048);
  ts::LocalMode mode(world);
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto _ : state) benchmark::DoNotOptimize(mpi_example::mlp_step(inputs));
}

class Quiet : public benchmark::ConsoleReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// The console's report, then each Tessera algorithm's median time over MPI_Allreduce's per size.
class WithRatios : public benchmark::ConsoleReporter {
 public:
  explicit WithRatios(int world_size) : world_size_(world_size) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs)
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median")
        median_[run.run_name.function_name] = run.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf(
        "\nmedian time / MPI_Allreduce's median time (%d repetitions each; * = what the default rules "
        "pick for this size):\n",
        kRepetitions);
    for (const Size& size : kSizes) {
      const auto mpi = median_.find(std::string("MPI_Allreduce/") + size.name);
      if (mpi == median_.end() || mpi->second <= 0) continue;
      const std::string chosen = ts::dist::algorithm_for("all_reduce", world_size_, size.floats * 4);
      for (const char* algorithm : kAlgorithms) {
        const auto tessera = median_.find(std::string("tessera_") + algorithm + "/" + size.name);
        if (tessera != median_.end())
          std::printf("  %-6s %-5s %.2fx%s\n", size.name, algorithm, tessera->second / mpi->second,
                      chosen == algorithm ? " *" : "");
      }
    }
  }

 private:
  int world_size_;
  std::map<std::string, double> median_;  // by benchmark name
};

}  // namespace

int main(int argc, char** argv) {
  const ts::World world = ts::init_world();  // initialises MPI through the transport plugin
  for (const Size& size : kSizes) {
    for (const char* algorithm : kAlgorithms)
      benchmark::RegisterBenchmark((std::string("tessera_") + algorithm + "/" + size.name).c_str(),
                                   [world, algorithm, size](benchmark::State& s) {
                                     tessera_all_reduce(s, world, algorithm, size.floats);
                                   })
          ->Iterations(size.iterations)
          ->Repetitions(kRepetitions)
          ->ReportAggregatesOnly(true)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("MPI_Allreduce/") + size.name).c_str(),
                                 [size](benchmark::State& s) { mpi_all_reduce(s, size.floats); })
        ->Iterations(size.iterations)
        ->Repetitions(kRepetitions)
        ->ReportAggregatesOnly(true)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  if (world.size() == 8) {  // 2 processes x 4 ranks (TESSERA_RANKS_PER_PROCESS=4)
    benchmark::RegisterBenchmark("mlp_step/hybrid_2x4", [world](benchmark::State& s) { mlp(s, world); })
        ->Iterations(5)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("mlp_step/simulated_8", [](benchmark::State& s) { mlp(s, ts::World(8)); })
        ->Iterations(5)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  Quiet quiet;
  WithRatios with_ratios(world.size());
  if (world.process_index() == 0)
    benchmark::RunSpecifiedBenchmarks(&with_ratios);
  else
    benchmark::RunSpecifiedBenchmarks(&quiet);
  benchmark::Shutdown();
  return 0;
}
