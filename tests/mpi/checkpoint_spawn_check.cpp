// Runs under mpirun (tests/mpi/CMakeLists.txt): checkpoints from ranks' programs (ts::spawn) across
// processes. Every rank saves its own rows of a dense tensor (uneven over 3 and 4 ranks), a LocalMode
// load over the whole world gives every hosted rank its Shard(1) columns, and a load from the ranks'
// programs again gives each rank its own rows.
//   checkpoint_spawn_check DIR
#include <cstdio>
#include <string>
#include <vector>

#include "checkpoint_support.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
namespace dcp = tessera::dcp;

namespace {

using checkpoint_check::check;
using checkpoint_check::failures;
using checkpoint_check::values;

constexpr int64_t kRows = 11, kCols = 6;

// Element (i, j) of the dense tensor, written out here rather than computed by the library.
double element(int64_t i, int64_t j) { return 3.0 + 0.5 * static_cast<double>(i * kCols + j); }

// Rank `rank`'s rows under Shard(0) over n ranks (ceil(rows / n) each, the last shorter or empty).
ts::Tensor rows_of(int n, int rank) {
  const int64_t chunk = (kRows + n - 1) / n;
  const int64_t start = std::min<int64_t>(kRows, chunk * rank), end = std::min<int64_t>(kRows, start + chunk);
  std::vector<double> v;
  for (int64_t i = start; i < end; ++i)
    for (int64_t j = 0; j < kCols; ++j) v.push_back(element(i, j));
  return ts::from_values(v, {end - start, kCols}).to(ts::kFloat32);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: checkpoint_spawn_check DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const ts::World world = ts::init_world();
  const int process = world.process_index();
  const int n = world.size();
  try {
    ts::spawn(n, [&](int rank) {
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
      dcp::save({{"w", ts::from_local(rows_of(n, rank), mesh, {ts::Shard(0)}, ts::Shape{kRows, kCols})},
                 {"step", int64_t{9}}},
                dir);
    });
    {
      ts::LocalMode mode(world);
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
      ts::Tensor zeros;
      {
        const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
        zeros = ts::zeros({kRows, kCols});
      }
      dcp::StateDict state = {{"w", ts::distribute_tensor(zeros, mesh, {ts::Shard(1)})},
                              {"step", int64_t{0}}};
      dcp::load(state, dir);
      const int64_t chunk = (kCols + n - 1) / n;
      for (int rank : world.ranks()) {
        std::vector<double> want;
        for (int64_t i = 0; i < kRows; ++i)
          for (int64_t j = std::min<int64_t>(kCols, chunk * rank);
               j < std::min<int64_t>(kCols, chunk * (rank + 1)); ++j)
            want.push_back(element(i, j));
        check(values(std::get<ts::DTensor>(state.at("w")).to_local().shard(rank)) == want,
              "w's columns on rank " + std::to_string(rank), process);
      }
      check(std::get<int64_t>(state.at("step")) == 9, "step", process);
    }
    ts::spawn(n, [&](int rank) {
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
      ts::Tensor zeros = ts::zeros_like(rows_of(n, rank));
      dcp::StateDict state = {{"w", ts::from_local(zeros, mesh, {ts::Shard(0)}, ts::Shape{kRows, kCols})},
                              {"step", int64_t{0}}};
      dcp::load(state, dir);
      const ts::Tensor own = std::get<ts::DTensor>(state.at("w")).to_local().shards().begin()->second;
      check(values(own) == values(rows_of(n, rank)), "w's rows loaded by rank " + std::to_string(rank),
            process);
      check(std::get<int64_t>(state.at("step")) == 9, "step on rank " + std::to_string(rank), process);
    });
  } catch (const std::exception& e) {
    std::printf("FAIL process %d: %s\n", process, e.what());
    return 1;
  }
  if (failures == 0) std::printf("OK checkpoint from rank programs across processes, process %d\n", process);
  return failures == 0 ? 0 : 1;
}
