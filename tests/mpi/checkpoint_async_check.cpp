// Runs under mpirun (tests/mpi/CMakeLists.txt): dcp::async_save across processes, with the
// collectives of a training step running between the save's return and its commit. Under
// TESSERA_DEBUG=1 every collective's fingerprint is compared across processes, so a save that
// exchanged messages on another thread would be caught meeting the wrong call.
//   checkpoint_async_check DIR
// Each save's values are distinct (a version number in every element); the expected values are
// computed here from the formula, element by element, not by the checkpoint code.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace ts = tessera;
namespace dcp = tessera::dcp;

namespace {

int failures = 0;
int process = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAIL process %d: %s\n", process, what.c_str());
    ++failures;
  }
}

constexpr int64_t kRows = 11, kCols = 7;

// Element (i, j) of save `version`'s w; its m is the negation.
double w_value(int version, int64_t i, int64_t j) {
  return version * 1000.0 + static_cast<double>(i * kCols + j) * 0.5;
}

ts::Tensor dense_of(int version, double sign) {
  const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
  std::vector<float> v;
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kCols; ++j) v.push_back(static_cast<float>(sign * w_value(version, i, j)));
  return ts::from_values(v, {kRows, kCols});
}

std::vector<double> values(const ts::Tensor& t) {
  const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
  return t.contiguous().to(ts::kFloat64).to_vector<double>();
}

// The rows [begin, end) x columns [cbegin, cend) of version's w (times sign), from the formula.
std::vector<double> expected_box(int version, double sign, int64_t begin, int64_t end, int64_t cbegin,
                                 int64_t cend) {
  std::vector<double> out;
  for (int64_t i = begin; i < end; ++i)
    for (int64_t j = cbegin; j < cend; ++j) out.push_back(static_cast<float>(sign * w_value(version, i, j)));
  return out;
}

// torch.chunk's split of `size` over n: rank r's [begin, end).
std::pair<int64_t, int64_t> chunk_range(int64_t size, int n, int r) {
  const int64_t per = (size + n - 1) / n;
  return {std::min(size, per * r), std::min(size, per * (r + 1))};
}

dcp::StateDict state_of(int version, const ts::DeviceMesh& mesh) {
  return {{"w", ts::distribute_tensor(dense_of(version, 1), mesh, {ts::Shard(0)})},
          {"m", ts::distribute_tensor(dense_of(version, -1), mesh, {ts::Replicate()})},
          {"local", ts::rank_map([version](int r) { return ts::full({3}, version * 100.0 + r); })},
          {"step", int64_t{version}}};
}

// What a training step does between a save and its commit: an all-reduce of a local tensor and
// a DTensor all-gather, each checked against its formula.
void training_step(const ts::World& world, const ts::DeviceMesh& mesh, int step) {
  const int n = world.size();
  ts::Tensor grad = ts::rank_map([step](int r) { return ts::full({5}, static_cast<double>(r + 1 + step)); });
  ts::dist::all_reduce(grad, ts::ReduceOp::SUM);
  const double sum = n * (n + 1) / 2.0 + static_cast<double>(n) * step;
  for (int rank : world.ranks())
    check(values(grad.shard(rank)) == std::vector<double>(5, sum),
          "training step all_reduce, rank " + std::to_string(rank));
  const ts::DTensor act = ts::distribute_tensor(dense_of(step, 1), mesh, {ts::Shard(0)});
  const ts::DTensor gathered = act.redistribute({ts::Replicate()});
  for (int rank : world.ranks())
    check(values(gathered.to_local().shard(rank)) == expected_box(step, 1, 0, kRows, 0, kCols),
          "training step all_gather, rank " + std::to_string(rank));
}

int count_data_files(const std::string& dir) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    files += entry.path().extension() == ".distcp" ? 1 : 0;
  return files;
}

// Reads the checkpoint as it is on disk, in a simulated one-rank world of this process's own:
// nothing is exchanged with the other processes, and the world's pending save is not touched.
void check_on_disk(const std::string& dir, int version, const std::string& when) {
  ts::LocalMode solo(ts::World(1));
  const ts::DeviceMesh one = ts::init_device_mesh("cpu", {1});
  dcp::StateDict state = {{"w", ts::distribute_tensor(ts::zeros({kRows, kCols}), one, {ts::Replicate()})},
                          {"step", int64_t{-1}}};
  dcp::load(state, dir);
  check(std::get<int64_t>(state.at("step")) == version,
        when + ": the committed step is " + std::to_string(version));
  check(values(std::get<ts::DTensor>(state.at("w")).to_local().shard(0)) ==
            expected_box(version, 1, 0, kRows, 0, kCols),
        when + ": the committed w is version " + std::to_string(version));
}

// Loads into other placements (w by columns, m by rows) and compares every hosted rank's shard
// with the formula of `version`.
void check_resumed(const ts::World& world, const ts::DeviceMesh& mesh, const dcp::StateDict& state,
                   int version, const std::string& when) {
  const int n = world.size();
  for (int rank : world.ranks()) {
    const auto [cb, ce] = chunk_range(kCols, n, rank);
    const auto [rb, re] = chunk_range(kRows, n, rank);
    check(values(std::get<ts::DTensor>(state.at("w")).to_local().shard(rank)) ==
              expected_box(version, 1, 0, kRows, cb, ce),
          when + ": w's Shard(1) shard of rank " + std::to_string(rank));
    check(values(std::get<ts::DTensor>(state.at("m")).to_local().shard(rank)) ==
              expected_box(version, -1, rb, re, 0, kCols),
          when + ": m's Shard(0) shard of rank " + std::to_string(rank));
    check(values(std::get<ts::Tensor>(state.at("local")).shard(rank)) ==
              std::vector<double>(3, version * 100.0 + rank),
          when + ": local's shard of rank " + std::to_string(rank));
  }
  check(std::get<int64_t>(state.at("step")) == version, when + ": step");
  (void)mesh;
}

dcp::StateDict resharded_zeros(const ts::DeviceMesh& mesh) {
  return {{"w", ts::distribute_tensor(ts::zeros({kRows, kCols}), mesh, {ts::Shard(1)})},
          {"m", ts::distribute_tensor(ts::zeros({kRows, kCols}), mesh, {ts::Shard(0)})},
          {"local", ts::rank_map([](int) { return ts::zeros({3}); })},
          {"step", int64_t{0}}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: checkpoint_async_check DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const ts::World world = ts::init_world();
  process = world.process_index();
  try {
    ts::LocalMode mode(world);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {world.size()});
    if (process == 0) std::filesystem::remove_all(dir);  // async_save's first exchange orders this

    // 1. An async save, then the state overwritten and training steps run before anything asks.
    dcp::StateDict state = state_of(1, mesh);
    std::future<dcp::SaveStats> first = dcp::async_save(state, dir);
    check(!std::filesystem::exists(dir + "/.metadata"),
          "nothing is committed before the commit is asked for");
    check(first.wait_for(std::chrono::seconds(0)) == std::future_status::deferred,
          "across processes the future is deferred: its commit runs where it is asked for");
    ts::Tensor w_shards = std::get<ts::DTensor>(state.at("w")).to_local();
    w_shards.fill_(-7.0);
    std::get<ts::Tensor>(state.at("local")).fill_(-7.0);
    for (int step = 0; step < 3; ++step) training_step(world, mesh, step);

    // 2. A second async save into the same directory commits the first before it starts.
    std::future<dcp::SaveStats> second = dcp::async_save(state_of(2, mesh), dir);
    check_on_disk(dir, 1, "after the second async_save returned");
    const dcp::SaveStats first_stats = first.get();  // committed already: nothing is exchanged
    check(first_stats.files.size() == 1 && first_stats.chunks_written > 0, "the first save's stats");
    for (int step = 3; step < 6; ++step) training_step(world, mesh, step);
    check_on_disk(dir, 1, "while the second save awaits its commit");

    // 3. get() commits the second save.
    const dcp::SaveStats second_stats = second.get();
    check(second_stats.files.size() == 1 && second_stats.files != first_stats.files,
          "the second save's own file");
    check_on_disk(dir, 2, "after the second save's get()");
    training_step(world, mesh, 6);  // get() left every process at the same collective
    {
      dcp::StateDict resumed = resharded_zeros(mesh);
      dcp::load(resumed, dir);
      check_resumed(world, mesh, resumed, 2, "resumed from the second save");
    }
    check(count_data_files(dir) == world.num_processes(),
          "the first save's files are removed by the second's commit");

    // 4. A load commits a pending save first, and loads what it saved.
    std::future<dcp::SaveStats> third = dcp::async_save(state_of(3, mesh), dir);
    training_step(world, mesh, 7);
    dcp::StateDict resumed = resharded_zeros(mesh);
    dcp::load(resumed, dir);
    check_resumed(world, mesh, resumed, 3, "resumed after an async save that load committed");
    check(third.get().files.size() == 1, "the third save's stats after load committed it");
    training_step(world, mesh, 8);
  } catch (const std::exception& e) {
    std::printf("FAIL process %d: %s\n", process, e.what());
    return 1;
  }
  if (failures == 0) std::printf("OK async checkpoint across processes, process %d\n", process);
  return failures == 0 ? 0 : 1;
}
