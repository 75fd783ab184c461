// Runs under mpirun (tests/mpi/CMakeLists.txt): a distributed checkpoint across processes. Every
// process writes its own data file with its hosted ranks' chunks (no process gathers a tensor),
// process 0 commits the metadata, and a load resharded to other placements gives every hosted rank
// the shard that distribute_tensor gives it.
//   checkpoint_check DIR
#include <cstdio>
#include <filesystem>
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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: checkpoint_check DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const ts::World world = ts::init_world();
  const int process = world.process_index();
  try {
    ts::LocalMode mode(world);
    const int n = world.size();
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    ts::Tensor dense;
    {
      const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
      dense = ts::arange(0, 11 * 7, 1, ts::kFloat32).reshape({11, 7}) * 0.5 + 3;
    }
    const ts::Tensor local = ts::rank_map([](int r) { return ts::full({3}, static_cast<double>(100 + r)); });
    const dcp::SaveStats saved = dcp::save({{"w", ts::distribute_tensor(dense, mesh, {ts::Shard(0)})},
                                            {"r", ts::distribute_tensor(dense, mesh, {ts::Replicate()})},
                                            {"local", local},
                                            {"step", int64_t{5}}},
                                           dir);
    check(saved.files.size() == 1, "one data file per process", process);
    // Replicated r is written once, by the process hosting rank 0.
    const int64_t r_bytes = process == 0 ? 77 * 4 : 0;
    int64_t w_bytes = 0;
    for (int rank : world.ranks())
      w_bytes += std::max<int64_t>(
                     0, std::min<int64_t>(11, (rank + 1) * ((11 + n - 1) / n)) - rank * ((11 + n - 1) / n)) *
                 7 * 4;
    check(saved.bytes_written == r_bytes + w_bytes + static_cast<int64_t>(world.ranks().size()) * 3 * 4,
          "bytes written: the hosted ranks' shards of w and local, r only on process 0", process);
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      files += entry.path().extension() == ".distcp" ? 1 : 0;
    check(files == world.num_processes(), "one data file per process in the directory", process);

    // Resharded: rows -> columns; replicated -> rows; local back into the same ranks.
    dcp::StateDict state = {{"w", ts::distribute_tensor(ts::zeros_like(dense), mesh, {ts::Shard(1)})},
                            {"r", ts::distribute_tensor(ts::zeros_like(dense), mesh, {ts::Shard(0)})},
                            {"local", ts::rank_map([](int) { return ts::zeros({3}); })},
                            {"step", int64_t{0}}};
    const dcp::LoadStats stats = dcp::load(state, dir);
    check(stats.bytes_read >= stats.bytes_needed, "bytes read cover the bytes needed", process);
    const ts::DTensor want_w = ts::distribute_tensor(dense, mesh, {ts::Shard(1)});
    const ts::DTensor want_r = ts::distribute_tensor(dense, mesh, {ts::Shard(0)});
    for (int rank : world.ranks()) {
      check(values(std::get<ts::DTensor>(state.at("w")).to_local().shard(rank)) ==
                values(want_w.to_local().shard(rank)),
            "w's Shard(1) shard of rank " + std::to_string(rank), process);
      check(values(std::get<ts::DTensor>(state.at("r")).to_local().shard(rank)) ==
                values(want_r.to_local().shard(rank)),
            "r's Shard(0) shard of rank " + std::to_string(rank), process);
      check(
          values(std::get<ts::Tensor>(state.at("local")).shard(rank)) == std::vector<double>(3, 100.0 + rank),
          "local's shard of rank " + std::to_string(rank), process);
    }
    check(std::get<int64_t>(state.at("step")) == 5, "step", process);
  } catch (const std::exception& e) {
    std::printf("FAIL process %d: %s\n", process, e.what());
    return 1;
  }
  if (failures == 0) std::printf("OK checkpoint across processes, process %d\n", process);
  return failures == 0 ? 0 : 1;
}
