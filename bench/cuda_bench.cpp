// The GPU benchmarks (scripts/gpu-check.sh runs them on a machine with an NVIDIA GPU):
//  - sgemm 4096x4096 float32 through backend-cuda vs cuBLAS called directly (target ratio <= 1.05);
//  - all_reduce of 64 MiB float32 on 8 simulated ranks whose shards live on one GPU vs a device
//    memcpy of the same bytes (target: within 2x of the memcpy's bandwidth);
//  - per-rank overhead of a 1-element add on the cuda backend (report).
// Without a device every benchmark is skipped with the reason, never reported as a time.
#include <benchmark/benchmark.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

constexpr int64_t kN = 4096;
constexpr int kRanks = 8;
constexpr int64_t kAllReduceElements = 64 * 1024 * 1024 / 4;

// Empty when a device can be used; else why not (the benchmark is skipped with it).
std::string device_problem() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorName(status);
  if (count == 0) return "no CUDA device";
  return {};
}

bool skip_without_device(benchmark::State& state) {
  const std::string problem = device_problem();
  if (!problem.empty()) state.SkipWithError(problem.c_str());
  return !problem.empty();
}

ts::TensorOptions on_cuda() { return ts::TensorOptions().backend("cuda"); }

}  // namespace

static void BM_SgemmTessera(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const ts::Tensor a = ts::randn({kN, kN}, on_cuda());
  const ts::Tensor b = ts::randn({kN, kN}, on_cuda());
  for (auto _ : state)
    benchmark::DoNotOptimize(ts::matmul(a, b));  // each kernel call completes before returning
  state.counters["TFLOP/s"] = benchmark::Counter(2.0 * kN * kN * kN * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_SgemmTessera)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_SgemmCublas(benchmark::State& state) {
  if (skip_without_device(state)) return;
  float* a = nullptr;
  float* b = nullptr;
  float* c = nullptr;
  const size_t bytes = static_cast<size_t>(kN * kN) * sizeof(float);
  cudaMalloc(reinterpret_cast<void**>(&a), bytes);
  cudaMalloc(reinterpret_cast<void**>(&b), bytes);
  cudaMalloc(reinterpret_cast<void**>(&c), bytes);
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
  cublasHandle_t handle = nullptr;
  cublasCreate(&handle);
  cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);  // as backend-cuda: no TF32
  const float one = 1.0f;
  const float zero = 0.0f;
  for (auto _ : state) {
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, b, kN, a, kN, &zero, c, kN);
    cudaDeviceSynchronize();
  }
  state.counters["TFLOP/s"] = benchmark::Counter(2.0 * kN * kN * kN * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}
BENCHMARK(BM_SgemmCublas)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_AllReduce64MiBOnGpu(benchmark::State& state) {
  if (skip_without_device(state)) return;
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < kRanks; ++r)
    shards.emplace_back(r, ts::full({kAllReduceElements}, float(r), on_cuda()));
  ts::Tensor t = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
  for (auto _ : state) ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  // The bytes one rank's result holds, per rank: comparable with the memcpy below.
  state.SetBytesProcessed(state.iterations() * kRanks * kAllReduceElements * 4);
}
BENCHMARK(BM_AllReduce64MiBOnGpu)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_DeviceMemcpy64MiB(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const size_t bytes = static_cast<size_t>(kAllReduceElements) * 4;
  void* from = nullptr;
  void* to = nullptr;
  cudaMalloc(&from, bytes);
  cudaMalloc(&to, bytes);
  for (auto _ : state) {
    for (int r = 0; r < kRanks; ++r) cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kRanks * bytes));
  cudaFree(from);
  cudaFree(to);
}
BENCHMARK(BM_DeviceMemcpy64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_OneElementAddPerRank(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const ts::LocalMode mode(kRanks);
  const ts::Tensor a = ts::ones({1}, on_cuda());
  const ts::Tensor b = ts::ones({1}, on_cuda());
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
  state.SetLabel("the time is one add on all 8 ranks: per rank, divide by 8");
}
BENCHMARK(BM_OneElementAddPerRank)->UseRealTime();

BENCHMARK_MAIN();
