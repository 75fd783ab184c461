// consolidate and inspect: the consolidated file read back as plain safetensors (parsed here
// with a JSON parser, not the checkpoint code), every tensor entry full.
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint_test_support.hpp"

using ct::distinct;
using ct::ScratchDir;
namespace ts = tessera;
namespace dcp = tessera::dcp;

namespace {

struct SafetensorsFile {
  nlohmann::json header;
  std::vector<char> data;  // after the header

  explicit SafetensorsFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    uint64_t length = 0;
    in.read(reinterpret_cast<char*>(&length), 8);
    std::string text(length, '\0');
    in.read(text.data(), static_cast<std::streamsize>(length));
    header = nlohmann::json::parse(text);
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::vector<float> floats(const std::string& name) const {
    const auto offsets = header.at(name).at("data_offsets").get<std::vector<size_t>>();
    std::vector<float> values((offsets[1] - offsets[0]) / 4);
    std::memcpy(values.data(), data.data() + offsets[0], offsets[1] - offsets[0]);
    return values;
  }
};

std::vector<float> as_floats(const ts::Tensor& t) {
  const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
  return t.contiguous().to_vector<float>();
}

}  // namespace

TEST_CASE("consolidate writes one safetensors file with every tensor entry full, scalars in __metadata__") {
  ScratchDir dir;
  const ts::Tensor w = distinct({10, 6}, 1), v = distinct({5}, 2);
  {
    ts::LocalMode mode(8);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 4});
    dcp::save({{"w", ts::distribute_tensor(w, mesh, {ts::Shard(1), ts::Shard(0)})},
               {"v", ts::distribute_tensor(v, mesh, {ts::Replicate(), ts::Shard(0)})},
               {"l", ts::rank_map([](int r) { return distinct({2}, r % 2); })},
               {"step", int64_t{7}},
               {"name", std::string("run")}},
              dir.path());
  }
  dcp::consolidate(dir.path(), dir / "all.safetensors");
  const SafetensorsFile file(dir / "all.safetensors");
  CHECK(file.header.at("w").at("dtype") == "F32");
  CHECK(file.header.at("w").at("shape") == nlohmann::json({10, 6}));
  CHECK(file.floats("w") == as_floats(w));
  CHECK(file.floats("v") == as_floats(v));
  CHECK(file.floats("l@rank5") == as_floats(distinct({2}, 1)));
  CHECK(file.floats("l@rank4") == as_floats(distinct({2}, 0)));
  CHECK(file.header.at("__metadata__").at("step") == "7");
  CHECK(file.header.at("__metadata__").at("name") == "\"run\"");
  // safetensors: entries' data lie back to back from offset 0, the header padded to 8 bytes.
  size_t end = 0;
  for (const auto& [name, entry] : file.header.items())
    if (name != "__metadata__") end = std::max(end, entry.at("data_offsets")[1].get<size_t>());
  CHECK(end == file.data.size());
}

TEST_CASE("inspect lists entries with kind, dtype, global shape, placements saved, chunks and bytes") {
  ScratchDir dir;
  {
    ts::LocalMode mode(4);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2});
    dcp::save({{"layers.0.w", ts::distribute_tensor(distinct({8, 4}), mesh, {ts::Shard(0), ts::Replicate()})},
               {"step", int64_t{12}}},
              dir.path());
  }
  const std::string text = dcp::inspect(dir.path());
  CAPTURE(text);
  CHECK(text.find("2 entries, 128 B of tensor data") != std::string::npos);
  CHECK(text.find("layers.0.w  dtensor  float32  [8, 4]  S(0),R on mesh [2, 2]  2       128 B") !=
        std::string::npos);
  CHECK(text.find("step        int") != std::string::npos);
  CHECK(text.find("= 12") != std::string::npos);
  CHECK(text.find("__1_0.distcp") != std::string::npos);
}
