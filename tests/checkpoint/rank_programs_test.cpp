// Checkpoints from ranks' programs (ts::spawn): every rank saves or loads its own state dict, whose
// DTensors hold its own shard alone, as torchrun processes do. Checked against dense tensors built
// here, shard by shard from index arithmetic, and across LocalMode saves and loads.
#include "checkpoint_test_support.hpp"

using ct::distinct;
using ct::ScratchDir;
namespace ts = tessera;
namespace dcp = tessera::dcp;

namespace {

// Rows [start, start + length) of `rows` that rank `rank` of `n` holds under Shard(0) (PyTorch's
// chunking: ceil(rows / n) per rank, the last ones shorter or empty).
std::pair<int64_t, int64_t> chunk_of(int64_t rows, int n, int rank) {
  const int64_t chunk = (rows + n - 1) / n;
  const int64_t start = std::min<int64_t>(rows, chunk * rank);
  return {start, std::min<int64_t>(rows, start + chunk) - start};
}

// Rank `rank`'s own rows of `dense` (a copy: the rank's own bytes).
ts::Tensor rows_of(const ts::Tensor& dense, int n, int rank) {
  const auto [start, length] = chunk_of(dense.size(0), n, rank);
  return dense.narrow(0, start, length).clone();
}

ts::Tensor plain_zeros(const ts::Shape& shape) {
  const ts::DisabledLocalMode plain = ts::maybe_disable_local_mode();
  return ts::zeros(shape);
}

std::string what_spawn_threw(int n, const std::function<void(int)>& program) {
  try {
    ts::spawn(n, program);
  } catch (const ts::Error& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

}  // namespace

TEST_CASE(
    "rank programs save their own shards, and a LocalMode load into another layout sees the dense values") {
  const ts::Tensor dense = distinct({7, 5}, 0.25);  // 7 rows: uneven over 3 and 4 ranks, one empty over 4
  const ts::Tensor bias = distinct({3}, 9);
  for (int n : {1, 3, 4}) {
    CAPTURE(n);
    ScratchDir dir;
    ts::spawn(n, [&](int rank) {
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
      const dcp::StateDict state = {
          {"w", ts::from_local(rows_of(dense, n, rank), mesh, {ts::Shard(0)}, ts::Shape{7, 5})},
          {"bias", bias},
          {"step", int64_t{42}},
          {"name", std::string("llama")}};
      const dcp::SaveStats stats = dcp::save(state, dir.path());
      CHECK(stats.files.size() == 1);
    });
    ts::LocalMode mode(2);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
    dcp::StateDict state = {{"w", ct::zeros_like_layout({7, 5}, mesh, {ts::Shard(1)})},
                            {"bias", plain_zeros({3})},
                            {"step", int64_t{0}},
                            {"name", std::string()}};
    dcp::load(state, dir.path());
    ct::check_equal(ct::dense_of(std::get<ts::DTensor>(state.at("w"))), dense, "w");
    ct::check_equal(std::get<ts::Tensor>(state.at("bias")), bias, "bias");
    CHECK(std::get<int64_t>(state.at("step")) == 42);
    CHECK(std::get<std::string>(state.at("name")) == "llama");
  }
}

TEST_CASE("rank programs load into their own shards in place, from a checkpoint saved on another layout") {
  const ts::Tensor dense = distinct({6, 9}, 1.5);
  const ts::Tensor bias = distinct({4}, -3);
  ScratchDir dir;
  {
    ts::LocalMode mode(4);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2});
    dcp::save({{"w", ts::distribute_tensor(dense, mesh, {ts::Shard(0), ts::Shard(1)})},
               {"bias", bias},
               {"lr", 0.5}},
              dir.path());
  }
  for (int n : {1, 3}) {
    CAPTURE(n);
    ts::spawn(n, [&](int rank) {
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
      const int64_t cols = 9 / n;
      dcp::StateDict state = {
          {"w", ts::from_local(plain_zeros({6, cols}), mesh, {ts::Shard(1)}, ts::Shape{6, 9})},
          {"bias", plain_zeros({4})},
          {"lr", 0.0}};
      const ts::Tensor own = std::get<ts::DTensor>(state.at("w")).to_local().shards().begin()->second;
      const void* bytes = own.impl().get();
      const dcp::LoadStats stats = dcp::load(state, dir.path());
      const ts::Tensor after = std::get<ts::DTensor>(state.at("w")).to_local().shards().begin()->second;
      CHECK(after.impl().get() == bytes);  // loaded into the rank's own shard, in place
      ct::check_equal(own, dense.narrow(1, cols * rank, cols), "rank " + std::to_string(rank) + "'s columns");
      ct::check_equal(std::get<ts::Tensor>(state.at("bias")), bias, "bias on rank " + std::to_string(rank));
      CHECK(std::get<double>(state.at("lr")) == 0.5);
      CHECK(stats.bytes_needed == 6 * 9 * 4 + 4 * 4);  // every rank's columns, and the bias once
    });
  }
}

TEST_CASE("rank programs with different keys (pipeline stages on sub-meshes) save and load together") {
  const ts::Tensor first = distinct({4, 3}, 0.5), second = distinct({5, 2}, 100);
  ScratchDir dir;
  const auto stage_mesh = [](int rank) {
    return rank < 2 ? ts::DeviceMesh("cpu", {2}, {}, {{0, 1}}) : ts::DeviceMesh("cpu", {2}, {}, {{2, 3}});
  };
  ts::spawn(4, [&](int rank) {
    const ts::Tensor& dense = rank < 2 ? first : second;
    dcp::StateDict state = {
        {rank < 2 ? "stage0.w" : "stage1.w",
         ts::from_local(rows_of(dense, 2, rank % 2), stage_mesh(rank), {ts::Shard(0)}, dense.sizes())}};
    dcp::save(state, dir.path());
  });
  {
    ts::LocalMode mode(1);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {1});
    dcp::StateDict state = {{"stage0.w", ct::zeros_like_layout({4, 3}, mesh, {ts::Replicate()})},
                            {"stage1.w", ct::zeros_like_layout({5, 2}, mesh, {ts::Replicate()})}};
    dcp::load(state, dir.path());
    ct::check_equal(ct::dense_of(std::get<ts::DTensor>(state.at("stage0.w"))), first, "stage0.w");
    ct::check_equal(ct::dense_of(std::get<ts::DTensor>(state.at("stage1.w"))), second, "stage1.w");
  }
  // And back into the stages, each rank its own rows.
  ts::spawn(4, [&](int rank) {
    const ts::Tensor& dense = rank < 2 ? first : second;
    const std::string key = rank < 2 ? "stage0.w" : "stage1.w";
    const ts::Tensor zeros = plain_zeros({chunk_of(dense.size(0), 2, rank % 2).second, dense.size(1)});
    dcp::StateDict state = {{key, ts::from_local(zeros, stage_mesh(rank), {ts::Shard(0)}, dense.sizes())}};
    const ts::Tensor own = std::get<ts::DTensor>(state.at(key)).to_local().shards().begin()->second;
    dcp::load(state, dir.path());
    ct::check_equal(own, rows_of(dense, 2, rank % 2), "rank " + std::to_string(rank) + "'s rows");
  });
}

TEST_CASE("async_save from rank programs stages the shards before it returns") {
  const ts::Tensor dense = distinct({5, 4}, 2.25);
  ScratchDir dir;
  ts::spawn(3, [&](int rank) {
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
    ts::Tensor mine = rows_of(dense, 3, rank);
    std::future<dcp::SaveStats> done =
        dcp::async_save({{"w", ts::from_local(mine, mesh, {ts::Shard(0)}, ts::Shape{5, 4})}}, dir.path());
    mine.fill_(-1);  // after staging: not in the checkpoint
    CHECK(done.get().chunks_written >= 1);
  });
  ts::LocalMode mode(1);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {1});
  dcp::StateDict state = {{"w", ct::zeros_like_layout({5, 4}, mesh, {ts::Replicate()})}};
  dcp::load(state, dir.path());
  ct::check_equal(ct::dense_of(std::get<ts::DTensor>(state.at("w"))), dense, "w");
}

TEST_CASE(
    "rank programs: a DTensor missing on a rank of its mesh, another directory, or another kind is an "
    "error") {
  ScratchDir dir;
  const ts::Tensor dense = distinct({4, 2}, 0);
  std::string error = what_spawn_threw(4, [&](int rank) {
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
    dcp::StateDict state;
    if (rank != 2) state.emplace("w", ts::from_local(rows_of(dense, 4, rank), mesh, {ts::Shard(0)}));
    dcp::save(state, dir.path());
  });
  CHECK_MESSAGE(error.find("entry 'w' is a DTensor on the mesh") != std::string::npos, error);
  CHECK_MESSAGE(error.find("rank 2 of that mesh has no such entry") != std::string::npos, error);

  error = what_spawn_threw(2, [&](int rank) {
    dcp::save({{"step", int64_t{1}}}, rank == 0 ? dir.path() : dir / "elsewhere");
  });
  CHECK_MESSAGE(error.find("collective mismatch") != std::string::npos, error);
  CHECK_MESSAGE(error.find(dir / "elsewhere") != std::string::npos, error);

  error = what_spawn_threw(2, [&](int rank) {
    dcp::save({{"x", rank == 0 ? dcp::StateValue(int64_t{1}) : dcp::StateValue(1.0)}}, dir.path());
  });
  CHECK_MESSAGE(error.find("entry 'x' is an int on rank 0 but a float on rank 1") != std::string::npos,
                error);
  CHECK(!std::filesystem::exists(dir / ".metadata"));  // nothing was committed by the failed saves
}
