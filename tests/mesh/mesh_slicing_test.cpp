// Sub-meshes by name, flattening, and a collective on a mesh group.
#include <doctest/doctest.h>

#include <algorithm>
#include <tessera/tessera.hpp>

namespace ts = tessera;

TEST_CASE("slicing (4,2) by one name: one sub-mesh per other coordinate") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  const ts::DeviceMesh tp = mesh["tp"];
  CHECK(tp.shape() == std::vector<int64_t>{2});
  CHECK(tp.dim_names() == std::vector<std::string>{"tp"});
  CHECK(tp.fibres() == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(tp.device_type() == "cpu");
  const ts::DeviceMesh dp = mesh["dp"];
  CHECK(dp.fibres() == std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(dp.group(0) == mesh.group("dp"));
  CHECK(dp.coordinate_of(6) == std::vector<int64_t>{3});
  CHECK(mesh[std::vector<std::string>{"dp", "tp"}] == mesh);
}

TEST_CASE("slicing (2,3,4) by two names keeps them row-major") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 3, 4}, {"pp", "dp", "tp"});
  const ts::DeviceMesh sub = mesh[{"pp", "tp"}];
  CHECK(sub.shape() == std::vector<int64_t>{2, 4});
  CHECK(sub.dim_names() == std::vector<std::string>{"pp", "tp"});
  REQUIRE(sub.fibres().size() == 3);
  CHECK(sub.fibres()[0] == std::vector<int>{0, 1, 2, 3, 12, 13, 14, 15});
  CHECK(sub.fibres()[1] == std::vector<int>{4, 5, 6, 7, 16, 17, 18, 19});
  CHECK(sub.fibres()[2] == std::vector<int>{8, 9, 10, 11, 20, 21, 22, 23});
  // A sub-mesh's groups are the parent's groups of the same dims.
  CHECK(sub.group("tp") == mesh.group("tp"));
  CHECK(sub.group("pp") == mesh.group("pp"));
  // Slicing a slice gives the same lines, listed per fibre of the slice: {0..3}, {12..15}, {4..7}, ...
  std::vector<std::vector<int>> twice = sub["tp"].fibres();
  CHECK(twice[1] == std::vector<int>{12, 13, 14, 15});
  std::sort(twice.begin(), twice.end());
  CHECK(twice == mesh["tp"].fibres());
  CHECK(sub.coordinate_of(17) == std::vector<int64_t>{1, 1});
}

TEST_CASE("slicing errors") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 3, 4}, {"pp", "dp", "tp"});
  CHECK_THROWS_WITH_AS((mesh[{"tp", "pp"}]), doctest::Contains("('tp', 'pp') is not in mesh order"),
                       ts::Error);
  CHECK_THROWS_WITH_AS((mesh[{"dp", "dp"}]), doctest::Contains("not in mesh order"), ts::Error);
  CHECK_THROWS_WITH_AS(mesh["ep"], doctest::Contains("no dim named 'ep'; the dims are ('pp', 'dp', 'tp')"),
                       ts::Error);
  CHECK_THROWS_AS(mesh[std::vector<std::string>{}], ts::Error);
  CHECK_THROWS_WITH_AS(ts::init_device_mesh("cpu", {2, 2})["dp"], doctest::Contains("no dim names"),
                       ts::Error);
}

TEST_CASE("flatten") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  const ts::DeviceMesh flat = mesh.flatten();
  CHECK(flat.shape() == std::vector<int64_t>{8});
  CHECK(flat.dim_names() == std::vector<std::string>{"dp_tp"});
  CHECK(flat.fibres() == mesh.fibres());
  CHECK(mesh.flatten("world").dim_names() == std::vector<std::string>{"world"});
  CHECK(ts::init_device_mesh("cpu", {2, 2}).flatten().dim_names().empty());
  // Flattening a sliced mesh keeps its fibres.
  const ts::DeviceMesh pp_tp =
      ts::init_device_mesh("cpu", {2, 3, 4}, {"pp", "dp", "tp"})[{"pp", "tp"}].flatten();
  CHECK(pp_tp.dim_names() == std::vector<std::string>{"pp_tp"});
  CHECK(pp_tp.shape() == std::vector<int64_t>{8});
  CHECK(pp_tp.fibres().size() == 3);
  CHECK(pp_tp.group(0).fibres()[1] == std::vector<int>{4, 5, 6, 7, 16, 17, 18, 19});
}

TEST_CASE("all_reduce on mesh.group(\"dp\") sums over each dp fibre") {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  ts::Tensor t = ts::rank_map([](int r) { return ts::full({2}, static_cast<double>(r)); });
  ts::dist::all_reduce(t, ts::ReduceOp::SUM, mesh.group("dp"));
  // dp fibres {0,2,4,6} (sum 12) and {1,3,5,7} (sum 16).
  for (int r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(ts::equal(t.shard(r), ts::full({2}, r % 2 == 0 ? 12.0 : 16.0)));
  }
  ts::dist::all_reduce(t, ts::ReduceOp::MAX, mesh.group("tp"));
  for (int r = 0; r < 8; ++r) CHECK(ts::equal(t.shard(r), ts::full({2}, 16.0)));
}
