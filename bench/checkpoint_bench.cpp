// Distributed checkpoints: save and load of 1 GiB of DTensor shards (a 16384 x 16384 float32
// DTensor over 8 ranks), same layout and resharded, against the disk. Compare the bytes_per_second
// with the disk's sequential bandwidth, measured with dd in the same directory:
//   dd if=/dev/zero of=$DIR/dd.bin bs=1M count=1024 oflag=direct conv=fsync   (write)
//   dd if=$DIR/dd.bin of=/dev/null bs=1M iflag=direct                        (read)
// The directory is $TESSERA_BENCH_DIR, else the system's temporary directory. Saves include their
// fsyncs; before each load the checkpoint's files are dropped from the page cache
// (posix_fadvise DONTNEED), so loads read the disk. read_ratio = bytes read / bytes needed.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tessera/tessera.hpp"

namespace ts = tessera;
namespace dcp = tessera::dcp;

namespace {

constexpr int64_t kSide = 16384;  // 16384^2 float32 = 1 GiB

std::string bench_dir(const std::string& name) {
  const char* root = std::getenv("TESSERA_BENCH_DIR");
  const std::filesystem::path dir =
      (root != nullptr ? std::filesystem::path(root) : std::filesystem::temp_directory_path()) / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

void drop_from_page_cache(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const int fd = ::open(entry.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

ts::DTensor one_gib(const ts::DeviceMesh& mesh, const ts::Placements& placements, bool distinct_values) {
  ts::Tensor dense;
  {
    const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
    dense = distinct_values ? ts::rand({kSide, kSide}) : ts::zeros({kSide, kSide});
  }
  return ts::distribute_tensor(dense, mesh, placements);
}

void BM_Save1GiB(benchmark::State& state) {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {8});
  const dcp::StateDict sd = {{"w", one_gib(mesh, {ts::Shard(0)}, true)}};
  const std::string dir = bench_dir("tessera-bench-save");
  for (auto _ : state) benchmark::DoNotOptimize(dcp::save(sd, dir));
  state.SetBytesProcessed(state.iterations() * kSide * kSide * 4);
  std::filesystem::remove_all(dir);
}

// Saves on (8) or (2, 4) with `from`, loads into (to_mesh, to) from disk.
void load_bench(benchmark::State& state, const std::vector<int64_t>& from_mesh, const ts::Placements& from,
                const std::vector<int64_t>& to_mesh, const ts::Placements& to) {
  const std::string dir = bench_dir("tessera-bench-load");
  {
    ts::LocalMode mode(8);
    dcp::save({{"w", one_gib(ts::init_device_mesh("cpu", from_mesh), from, true)}}, dir);
  }
  ts::LocalMode mode(8);
  dcp::StateDict sd = {{"w", one_gib(ts::init_device_mesh("cpu", to_mesh), to, false)}};
  dcp::LoadStats stats;
  for (auto _ : state) {
    state.PauseTiming();
    drop_from_page_cache(dir);
    state.ResumeTiming();
    stats = dcp::load(sd, dir);
  }
  state.SetBytesProcessed(state.iterations() * stats.bytes_needed);
  state.counters["read_ratio"] =
      static_cast<double>(stats.bytes_read) / static_cast<double>(stats.bytes_needed);
  state.counters["reads"] = static_cast<double>(stats.reads);
  std::filesystem::remove_all(dir);
}

void BM_Load1GiB_SameLayout(benchmark::State& state) {
  load_bench(state, {8}, {ts::Shard(0)}, {8}, {ts::Shard(0)});
}
void BM_Load1GiB_Reshard_2x4_to_4x2(benchmark::State& state) {
  load_bench(state, {2, 4}, {ts::Shard(0), ts::Shard(1)}, {4, 2}, {ts::Shard(0), ts::Shard(1)});
}
void BM_Load1GiB_Shard0_to_Shard1(benchmark::State& state) {
  load_bench(state, {8}, {ts::Shard(0)}, {8}, {ts::Shard(1)});
}

}  // namespace

BENCHMARK(BM_Save1GiB)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_Load1GiB_SameLayout)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_Load1GiB_Reshard_2x4_to_4x2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_Load1GiB_Shard0_to_Shard1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_MAIN();
