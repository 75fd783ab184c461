// What a load refuses, and how it says so: missing keys, kind, dtype and shape mismatches, local
// tensors on other ranks, corrupted bytes, truncated and missing files; each message names the
// file and the entry.
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "checkpoint_test_support.hpp"

using ct::distinct;
using ct::ScratchDir;
namespace ts = tessera;
namespace dcp = tessera::dcp;

namespace {

nlohmann::json metadata_of(const ScratchDir& dir) {
  std::ifstream in(dir / ".metadata");
  return nlohmann::json::parse(in);
}

// Flips one byte of a file.
void flip_byte(const std::string& path, int64_t at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  char c = 0;
  f.get(c);
  f.seekp(at);
  f.put(static_cast<char>(c ^ 0x40));
}

}  // namespace

TEST_CASE("a requested key missing from the checkpoint, a kind, dtype or shape mismatch: errors naming it") {
  ScratchDir dir;
  dcp::save({{"layer.weight", distinct({4, 3})}, {"step", int64_t{1}}}, dir.path());
  dcp::StateDict missing = {{"layer.bias", ts::zeros({3})}};
  CHECK_THROWS_WITH_AS(
      dcp::load(missing, dir.path()),
      doctest::Contains("no entry 'layer.bias' (the checkpoint has 2 entries, among them layer.weight)"),
      ts::Error);
  dcp::StateDict dtype = {{"layer.weight", ts::zeros({4, 3}, ts::kFloat64)}};
  CHECK_THROWS_WITH_AS(
      dcp::load(dtype, dir.path()),
      doctest::Contains("entry 'layer.weight' was saved as float32 but the state dict's tensor is float64"),
      ts::Error);
  dcp::StateDict shape = {{"layer.weight", ts::zeros({3, 4})}};
  CHECK_THROWS_WITH_AS(
      dcp::load(shape, dir.path()),
      doctest::Contains("entry 'layer.weight' was saved with shape [4, 3] but the state dict's tensor "
                        "has shape [3, 4]"),
      ts::Error);
  dcp::StateDict kind = {{"step", 1.0}};
  CHECK_THROWS_WITH_AS(
      dcp::load(kind, dir.path()),
      doctest::Contains("entry 'step' was saved as an int, but the state dict holds a float there"),
      ts::Error);
  // Nothing was written by the refused loads: the checks come before any read.
  dcp::StateDict partly = {{"layer.weight", ts::zeros({4, 3})}, {"nope", ts::zeros({1})}};
  CHECK_THROWS_AS(dcp::load(partly, dir.path()), ts::Error);
  CHECK(std::get<ts::Tensor>(partly.at("layer.weight")).sum().item<double>() == 0.0);
}

TEST_CASE("no checkpoint in the directory, and local tensors loaded into other ranks") {
  ScratchDir dir;
  dcp::StateDict state = {{"a", ts::zeros({1})}};
  CHECK_THROWS_WITH_AS(dcp::load(state, dir / "nothing"),
                       doctest::Contains(".metadata is missing; the directory does not exist"), ts::Error);
  {
    ts::LocalMode mode(2);
    dcp::save({{"l", ts::rank_map([](int r) { return distinct({2}, r); })}}, dir.path());
  }
  ts::LocalMode mode(3);
  dcp::StateDict three = {{"l", ts::rank_map([](int) { return ts::zeros({2}); })}};
  CHECK_THROWS_WITH_AS(
      dcp::load(three, dir.path()),
      doctest::Contains("entry 'l' is a local tensor saved for ranks {0, 1}, which lack rank 2"), ts::Error);
  dcp::StateDict plain;
  {
    const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
    plain = {{"l", ts::zeros({2})}};
  }
  CHECK_THROWS_WITH_AS(dcp::load(plain, dir.path()), doctest::Contains("was saved as a local tensor"),
                       ts::Error);
}

TEST_CASE("a corrupted byte is found by its block checksum, naming the file, the entry and the chunk") {
  ScratchDir dir;
  ts::LocalMode mode(2);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  dcp::save({{"w", ts::distribute_tensor(distinct({8, 4}), mesh, {ts::Shard(0)})}}, dir.path(),
            {.checksum_block_bytes = 16});
  const nlohmann::json chunk = metadata_of(dir)["entries"]["w"]["chunks"][1];
  const std::string file = chunk["file"];
  const int64_t begin = chunk["data"][0];
  flip_byte(dir / file, begin + 37);  // chunk byte 37: block 2 of 16-byte blocks
  dcp::StateDict state = {{"w", ct::zeros_like_layout({8, 4}, mesh, {ts::Shard(0)})}};
  CHECK_THROWS_WITH_AS(dcp::load(state, dir.path()),
                       doctest::Contains(("entry 'w', chunk 1 (offsets [4, 0], sizes [4, 4]) in data file '" +
                                          file + "': checksum mismatch in block 2 (chunk bytes [32, 48)")
                                             .c_str()),
                       ts::Error);
}

TEST_CASE("a truncated or missing data file is an error naming the file, the entry and the bytes missing") {
  ScratchDir dir;
  dcp::save({{"a", distinct({64})}, {"b", distinct({64}, 3)}}, dir.path());
  const nlohmann::json meta = metadata_of(dir);
  const std::string file = meta["files"][0];
  const int64_t b_begin = meta["entries"]["b"]["chunks"][0]["data"][0];
  std::filesystem::resize_file(dir / file, static_cast<uintmax_t>(b_begin + 10));
  dcp::StateDict state = {{"b", ts::zeros({64})}};
  CHECK_THROWS_WITH_AS(dcp::load(state, dir.path()),
                       doctest::Contains(("entry 'b', chunk 0 (offsets [0], sizes [64]) in data file '" +
                                          file + "': the file is truncated")
                                             .c_str()),
                       ts::Error);
  std::filesystem::remove(dir / file);
  CHECK_THROWS_WITH_AS(dcp::load(state, dir.path()),
                       doctest::Contains(("entry 'b', chunk 0 (offsets [0], sizes [64]) in data file '" +
                                          file + "': checkpoint: cannot open")
                                             .c_str()),
                       ts::Error);
}

TEST_CASE("a damaged .metadata is an error naming the field") {
  ScratchDir dir;
  dcp::save({{"a", distinct({4})}}, dir.path());
  nlohmann::json meta = metadata_of(dir);
  meta["entries"]["a"]["chunks"][0].erase("crc32c");
  std::ofstream(dir / ".metadata") << meta.dump();
  dcp::StateDict state = {{"a", ts::zeros({4})}};
  CHECK_THROWS_WITH_AS(dcp::load(state, dir.path()),
                       doctest::Contains("entry 'a' chunk 0: field 'crc32c' is missing"), ts::Error);
}

// Sizes in a damaged (or hostile) .metadata are checked before any is used: a size whose bytes
// overflow 64 bits, a chunk outside the shape, byte ranges that do not fit the chunk.
TEST_CASE("a .metadata with overflowing sizes, chunks outside the shape or wrong byte ranges is refused") {
  ScratchDir dir;
  dcp::save({{"a", distinct({4, 3})}}, dir.path());
  const nlohmann::json saved = metadata_of(dir);
  const auto load_with = [&](const std::function<void(nlohmann::json&)>& damage) {
    nlohmann::json meta = saved;
    damage(meta["entries"]["a"]);
    std::ofstream(dir / ".metadata", std::ios::trunc) << meta.dump();
    dcp::StateDict state = {{"a", ts::zeros({4, 3})}};
    dcp::load(state, dir.path());
  };
  CHECK_THROWS_WITH_AS(load_with([](nlohmann::json& a) {
                         a["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
                       }),
                       doctest::Contains("holds more bytes than fit in 64 bits"), ts::Error);
  CHECK_THROWS_WITH_AS(
      load_with([](nlohmann::json& a) {
        a["chunks"][0]["sizes"] = {int64_t{1} << 62, 3};
      }),
      doctest::Contains("entry 'a' chunk 0: the chunk's sizes [4611686018427387904, 3] holds more"),
      ts::Error);
  CHECK_THROWS_WITH_AS(load_with([](nlohmann::json& a) {
                         a["shape"] = {-4, 3};
                       }),
                       doctest::Contains("the shape [-4, 3] has a negative size"), ts::Error);
  CHECK_THROWS_WITH_AS(load_with([](nlohmann::json& a) {
                         a["chunks"][0]["offsets"] = {2, 0};
                       }),
                       doctest::Contains("lies outside the shape [4, 3]"), ts::Error);
  CHECK_THROWS_WITH_AS(load_with([](nlohmann::json& a) { a["chunks"][0]["data"][1] = 1000; }),
                       doctest::Contains("the metadata is damaged"), ts::Error);
  // The undamaged metadata still loads.
  std::ofstream(dir / ".metadata", std::ios::trunc) << saved.dump();
  dcp::StateDict state = {{"a", ts::zeros({4, 3})}};
  dcp::load(state, dir.path());
  CHECK(ts::equal(std::get<ts::Tensor>(state.at("a")), distinct({4, 3})));
}

TEST_CASE("save refuses bad options and undefined tensors") {
  ScratchDir dir;
  CHECK_THROWS_WITH_AS(dcp::save({{"a", distinct({4})}}, dir.path(), {.checksum_block_bytes = 6}),
                       doctest::Contains("checksum_block_bytes is 6; expected a positive multiple of 4"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(dcp::save({{"a", ts::Tensor()}}, dir.path()),
                       doctest::Contains("entry 'a' is an undefined tensor"), ts::Error);
}
