// Save and load in the same layout: DTensors on 1, 3, 7 and 8 ranks (even and uneven shards, 1-d
// and 2-d meshes), local tensors, plain tensors, scalars; in-place loading; dtypes.
#include <cmath>
#include <limits>

#include "checkpoint_test_support.hpp"

using ct::distinct;
using ct::ScratchDir;
namespace ts = tessera;
namespace dcp = tessera::dcp;

TEST_CASE("round trip of DTensors in their own layout on 1, 3, 7 and 8 ranks, tensors filled in place") {
  for (int n : {1, 3, 7, 8}) {
    CAPTURE(n);
    ScratchDir dir;
    ts::LocalMode mode(n);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    // 10 rows over 3, 7 or 8 ranks is uneven (some ranks hold none on 8: ceil(10/8)=2 per rank).
    const ts::Tensor w = distinct({10, 6}, 1), b = distinct({13}, 100), r = distinct({4, 3}, 200);
    dcp::StateDict saved = {{"w", ts::distribute_tensor(w, mesh, {ts::Shard(0)})},
                            {"wt", ts::distribute_tensor(w, mesh, {ts::Shard(1)})},
                            {"b", ts::distribute_tensor(b, mesh, {ts::Shard(0)})},
                            {"r", ts::distribute_tensor(r, mesh, {ts::Replicate()})}};
    const dcp::SaveStats written = dcp::save(saved, dir.path());
    CHECK(written.files.size() == 1);
    // Replicated data is written once: r's 12 floats appear once, not n times.
    CHECK(written.bytes_written == (60 + 60 + 13 + 12) * 4);

    dcp::StateDict loaded = {{"w", ct::zeros_like_layout({10, 6}, mesh, {ts::Shard(0)})},
                             {"wt", ct::zeros_like_layout({10, 6}, mesh, {ts::Shard(1)})},
                             {"b", ct::zeros_like_layout({13}, mesh, {ts::Shard(0)})},
                             {"r", ct::zeros_like_layout({4, 3}, mesh, {ts::Replicate()})}};
    // Identity: the shards' bytes before the load are the ones that receive the values.
    const ts::DTensor w_before = std::get<ts::DTensor>(loaded.at("w"));
    const ts::Tensor shard0 = w_before.to_local().shard(0);
    const dcp::LoadStats stats = dcp::load(loaded, dir.path());
    ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("w"))), w, "w");
    ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("wt"))), w, "wt");
    ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("b"))), b, "b");
    ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("r"))), r, "r");
    ct::check_equal(shard0, w.narrow(0, 0, shard0.size(0)),
                    "rank 0's shard of w, the tensor it was before the load");
    // Every rank receives its shard (replicated r once per rank); the process reads each saved
    // byte once: together its ranks need every element.
    const int64_t needed = (60 + 60 + 13) * 4 + n * 12 * 4;
    CHECK(stats.bytes_needed == needed);
    CHECK(stats.bytes_read == (60 + 60 + 13 + 12) * 4);
  }
}

TEST_CASE(
    "round trip on a 2-d mesh (2, 4) with Shard and Replicate mixed, and a Partial DTensor saved reduced") {
  ScratchDir dir;
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 4}, {"dp", "tp"});
  const ts::Tensor w = distinct({9, 10}, 3);
  const ts::DTensor ss = ts::distribute_tensor(w, mesh, {ts::Shard(0), ts::Shard(1)});
  const ts::DTensor rs = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(0)});
  // A Partial DTensor: every rank holds w / 8 ... summed it is w. Built from local values.
  const ts::Tensor part = ts::rank_map([&](int) { return w * 0.125; });
  const ts::DTensor partial = ts::from_local(part, mesh, {ts::Partial(), ts::Partial()});
  dcp::save({{"ss", ss}, {"rs", rs}, {"p", partial}}, dir.path());
  dcp::StateDict loaded = {{"ss", ct::zeros_like_layout({9, 10}, mesh, {ts::Shard(0), ts::Shard(1)})},
                           {"rs", ct::zeros_like_layout({9, 10}, mesh, {ts::Replicate(), ts::Shard(0)})},
                           {"p", ct::zeros_like_layout({9, 10}, mesh, {ts::Replicate(), ts::Replicate()})}};
  dcp::load(loaded, dir.path());
  ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("ss"))), w, "ss");
  ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("rs"))), w, "rs");
  ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("p"))), w, "p (saved as the reduced sum)");
}

TEST_CASE("round trip of local tensors (equal shards written once), plain tensors and every dtype") {
  ScratchDir dir;
  ts::LocalMode mode(4);
  // Shards 0 and 2 equal, 1 and 3 distinct.
  const ts::Tensor local = ts::rank_map([](int r) { return distinct({3, 2}, r == 2 ? 0 : r); });
  const ts::Tensor plain = distinct({5}, 7);
  dcp::StateDict saved = {{"local", local}, {"plain", plain}};
  for (ts::DType dtype :
       {ts::kFloat64, ts::kBFloat16, ts::kFloat16, ts::kInt32, ts::kInt64, ts::kInt8, ts::kUInt8}) {
    saved.emplace(std::string("dtype.") + std::string(ts::dtype_name(dtype)), distinct({2, 3}, 1, dtype));
  }
  {
    const ts::DisabledLocalMode plain_mode = ts::maybe_disable_local_mode();
    saved.emplace("bool", ts::from_values(std::vector<int64_t>{1, 0, 0, 1, 1}, {5}).to(ts::kBool));
    saved.emplace("scalar0d", ts::scalar_tensor(2.5, ts::kFloat32));
  }
  const dcp::SaveStats written = dcp::save(saved, dir.path());
  CHECK(written.chunks_written == 3 + 1 + 7 + 1 + 1);  // local: 3 distinct shards

  dcp::StateDict loaded;
  for (const auto& [key, value] : saved) {
    const ts::Tensor& t = std::get<ts::Tensor>(value);
    loaded.emplace(key, ts::zeros_like(t));
  }
  dcp::load(loaded, dir.path());
  for (const auto& [key_bound, value] : saved) {
    const auto& key = key_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(key);
    const ts::Tensor& want = std::get<ts::Tensor>(value);
    const ts::Tensor& got = std::get<ts::Tensor>(loaded.at(key));
    CHECK(got.dtype() == want.dtype());
    if (want.is_local()) {
      for (int r = 0; r < 4; ++r)
        ct::check_equal(got.shard(r), want.shard(r), key + " rank " + std::to_string(r));
    } else {
      ct::check_equal(got, want, key);
    }
  }
}

TEST_CASE("scalars and strings round trip exactly (NaN, infinities, negative ints, text with quotes)") {
  ScratchDir dir;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  dcp::StateDict saved = {{"step", int64_t{-42}},
                          {"big", std::numeric_limits<int64_t>::max()},
                          {"lr", 0.1},
                          {"nan", nan},
                          {"inf", -std::numeric_limits<double>::infinity()},
                          {"name", std::string("model \"A\"\n\xc3\xa9")}};
  dcp::save(saved, dir.path());
  dcp::StateDict loaded = {{"step", int64_t{0}}, {"big", int64_t{0}}, {"lr", 0.0},
                           {"nan", 0.0},         {"inf", 0.0},        {"name", std::string()}};
  dcp::load(loaded, dir.path());
  CHECK(std::get<int64_t>(loaded.at("step")) == -42);
  CHECK(std::get<int64_t>(loaded.at("big")) == std::numeric_limits<int64_t>::max());
  CHECK(std::get<double>(loaded.at("lr")) == 0.1);
  CHECK(std::isnan(std::get<double>(loaded.at("nan"))));
  CHECK(std::get<double>(loaded.at("inf")) == -std::numeric_limits<double>::infinity());
  CHECK(std::get<std::string>(loaded.at("name")) == "model \"A\"\n\xc3\xa9");
}

TEST_CASE("keys in the checkpoint that nobody requests are ignored, and a second save replaces the first") {
  ScratchDir dir;
  dcp::save({{"a", distinct({3}, 1)}, {"b", distinct({2}, 2)}}, dir.path());
  dcp::save({{"a", distinct({3}, 10)}, {"c", int64_t{5}}}, dir.path());
  dcp::StateDict only_a = {{"a", ts::zeros({3})}};
  dcp::load(only_a, dir.path());
  ct::check_equal(std::get<ts::Tensor>(only_a.at("a")), distinct({3}, 10), "a from the second save");
  dcp::StateDict b = {{"b", ts::zeros({2})}};
  CHECK_THROWS_WITH_AS(dcp::load(b, dir.path()), doctest::Contains("no entry 'b'"), ts::Error);
  // The first save's data file is gone: only the second's and the metadata remain.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  CHECK(files == 2);
}

TEST_CASE("async_save stages the state: writes to the tensors after it returns do not reach the checkpoint") {
  ScratchDir dir;
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
  const ts::Tensor w = distinct({8, 3}, 5);
  ts::DTensor dt = ts::distribute_tensor(w, mesh, {ts::Shard(0)});
  ts::Tensor plain;
  {
    const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
    plain = distinct({6}, 9);
  }
  std::future<dcp::SaveStats> pending =
      dcp::async_save({{"w", dt}, {"p", plain}, {"step", int64_t{3}}}, dir.path());
  // Overwrite everything in place at once.
  ts::Tensor local = dt.to_local();
  local.fill_(-1.0);
  plain.fill_(-1.0);
  const dcp::SaveStats stats = pending.get();
  CHECK(stats.chunks_written == 5);
  dcp::StateDict loaded = {{"w", ct::zeros_like_layout({8, 3}, mesh, {ts::Replicate()})},
                           {"p", ts::zeros_like(plain)}};
  dcp::load(loaded, dir.path());
  ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("w"))), w,
                  "w as it was when async_save returned");
  ct::check_equal(std::get<ts::Tensor>(loaded.at("p")), distinct({6}, 9),
                  "p as it was when async_save returned");
}

TEST_CASE(
    "async saves into one directory, nobody waiting: each starts after the one before, the load sees the "
    "last") {
  ScratchDir dir;
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  std::vector<std::future<dcp::SaveStats>> saves;
  for (int version = 1; version <= 3; ++version)
    saves.push_back(dcp::async_save(
        {{"w", ts::distribute_tensor(distinct({7, 2}, 100.0 * version), mesh, {ts::Shard(0)})},
         {"step", int64_t{version}}},
        dir.path()));
  dcp::StateDict loaded = {{"w", ct::zeros_like_layout({7, 2}, mesh, {ts::Shard(1)})}, {"step", int64_t{0}}};
  dcp::load(loaded, dir.path());
  CHECK(std::get<int64_t>(loaded.at("step")) == 3);
  ct::check_equal(ct::dense_of(std::get<ts::DTensor>(loaded.at("w"))), distinct({7, 2}, 300.0),
                  "w of the third save");
  std::vector<std::string> files;
  for (auto& save : saves) {
    const dcp::SaveStats stats = save.get();
    REQUIRE(stats.files.size() == 1);
    files.push_back(stats.files[0]);
  }
  CHECK(files[0] != files[1]);
  CHECK(files[1] != files[2]);
  // Only the last save's data file and the metadata remain.
  int left = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    left += entry.path().filename() == files[2] || entry.path().filename() == ".metadata" ? 1 : 100;
  CHECK(left == 2);
}

TEST_CASE(
    "a destination that is not a contiguous host tensor (a transposed view) is filled through a buffer") {
  ScratchDir dir;
  const ts::Tensor w = distinct({3, 4}, 8);
  dcp::save({{"w", w}}, dir.path());
  const ts::Tensor base = ts::zeros({4, 3});
  const ts::Tensor view = base.t();  // [3, 4], not contiguous
  REQUIRE_FALSE(view.is_contiguous());
  dcp::StateDict state = {{"w", view}};
  dcp::load(state, dir.path());
  ct::check_equal(view, w, "the view");
  ct::check_equal(base, w.t(), "the tensor the view shows");
}
