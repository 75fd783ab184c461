// DeviceMesh: golden values computed by hand, coordinates and groups of several shapes checked
// against the spec's formula written out with plain loops, per-rank values and every error.
#include <doctest/doctest.h>

#include <map>
#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// Row-major coordinates: coord[i] = (r / prod(shape[i+1:])) % shape[i].
std::vector<int64_t> spec_coordinate(int64_t r, const std::vector<int64_t>& shape) {
  std::vector<int64_t> coord;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t inner = 1;
    for (size_t j = i + 1; j < shape.size(); ++j) inner *= shape[j];
    coord.push_back((r / inner) % shape[i]);
  }
  return coord;
}

// The group along `dim`: ranks that agree on every other coordinate, ordered by coordinate along
// `dim`; groups ordered by first rank (ranks are scanned in order, so first seen = smallest).
std::vector<std::vector<int>> spec_groups(const std::vector<int64_t>& shape, size_t dim) {
  std::map<std::vector<int64_t>, std::vector<int>> by_rest;
  std::vector<std::vector<int64_t>> order;
  for (int r = 0; r < product(shape); ++r) {
    std::vector<int64_t> rest = spec_coordinate(r, shape);
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(dim));
    if (!by_rest.count(rest)) order.push_back(rest);
    by_rest[rest].push_back(r);  // ascending r = ascending coordinate along dim
  }
  std::vector<std::vector<int>> groups;
  for (const auto& rest : order) groups.push_back(by_rest[rest]);
  return groups;
}

}  // namespace

TEST_CASE("golden: mesh (4,2) (dp,tp)") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  CHECK(mesh.coordinate_of(5) == std::vector<int64_t>{2, 1});
  CHECK(mesh.group("tp").fibres() == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(mesh.group("dp").fibres() == std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(mesh.group(1) == mesh.group("tp"));
}

TEST_CASE("accessors") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  CHECK(mesh.device_type() == "cpu");
  CHECK(mesh.shape() == std::vector<int64_t>{4, 2});
  CHECK(mesh.ndim() == 2);
  CHECK(mesh.size() == 8);
  CHECK(mesh.size(0) == 4);
  CHECK(mesh.size(1) == 2);
  CHECK(mesh.dim_names() == std::vector<std::string>{"dp", "tp"});
  CHECK(mesh.dim_index("tp") == 1);
  CHECK(mesh.fibres() == std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6, 7}});
  CHECK(mesh.ranks() == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(mesh.topology().name() == "fully_connected");
  CHECK(mesh.topology().world() == 8);
}

TEST_CASE("coordinates and groups of several shapes follow the spec formula") {
  const std::vector<std::vector<int64_t>> shapes{{1}, {3}, {4}, {2, 2}, {4, 2}, {2, 3, 4}};
  for (const auto& shape : shapes) {
    CAPTURE(ts::DeviceMesh("cpu", shape).to_string());
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", shape);
    CHECK(mesh.size() == product(shape));
    for (int r = 0; r < product(shape); ++r) CHECK(mesh.coordinate_of(r) == spec_coordinate(r, shape));
    for (size_t d = 0; d < shape.size(); ++d) {
      CAPTURE(d);
      CHECK(mesh.group(static_cast<int64_t>(d)).fibres() == spec_groups(shape, d));
      CHECK(mesh.group(static_cast<int64_t>(d)).size() == shape[d]);
    }
  }
}

TEST_CASE("group of (2,3,4) along the middle dim, by hand") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 3, 4}, {"a", "b", "c"});
  const std::vector<std::vector<int>> fibres = mesh.group("b").fibres();
  REQUIRE(fibres.size() == 8);
  CHECK(fibres[0] == std::vector<int>{0, 4, 8});
  CHECK(fibres[3] == std::vector<int>{3, 7, 11});
  CHECK(fibres[4] == std::vector<int>{12, 16, 20});
  CHECK(mesh.coordinate_of(23) == std::vector<int64_t>{1, 2, 3});
  CHECK(mesh.coordinate_of(17) == std::vector<int64_t>{1, 1, 1});
}

TEST_CASE("local_rank and coordinate are per-rank values") {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  const ts::SymInt tp = mesh.local_rank("tp");
  REQUIRE(tp.is_local());
  CHECK(tp.values() ==
        std::map<int, int64_t>{{0, 0}, {1, 1}, {2, 0}, {3, 1}, {4, 0}, {5, 1}, {6, 0}, {7, 1}});
  CHECK(mesh.local_rank("dp").values() ==
        std::map<int, int64_t>{{0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 2}, {5, 2}, {6, 3}, {7, 3}});
  const std::vector<ts::SymInt> coord = mesh.coordinate();
  REQUIRE(coord.size() == 2);
  CHECK(coord[0].values() == mesh.local_rank(0).values());
  CHECK(coord[1].values() == tp.values());
  // Rank r's flat index rebuilt from its coordinate, per rank.
  const ts::SymInt flat = coord[0] * 2 + coord[1];
  for (int r = 0; r < 8; ++r) CHECK(flat.at(r) == r);
}

TEST_CASE("local_rank of a size-1 dim is a plain int") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {1, 4}, {"pp", "dp"});
  CHECK_FALSE(mesh.local_rank("pp").is_local());
  CHECK(mesh.local_rank("pp").as_int() == 0);
  CHECK(mesh.local_rank("dp").is_local());
}

TEST_CASE("init_device_mesh inside a local mode needs the mode's world") {
  {
    ts::LocalMode mode(6);
    CHECK_THROWS_WITH_AS(
        ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"}),
        "init_device_mesh: mesh shape [4, 2] has 8 ranks but the world (local mode) has 6 ranks", ts::Error);
    CHECK(ts::init_device_mesh("cpu", {3, 2}).size() == 6);
  }
  {
    ts::LocalMode mode(ts::RankSet{0, 1, 2, 5});
    CHECK_THROWS_WITH_AS(ts::init_device_mesh("cpu", {4}), doctest::Contains("{0, 1, 2, 5}"), ts::Error);
  }
  CHECK(ts::init_device_mesh("cpu", {16}).size() == 16);  // outside a mode any size is fine
}

TEST_CASE("constructor errors name the value and what was expected") {
  CHECK_THROWS_WITH_AS(ts::DeviceMesh("cpu", {}), doctest::Contains("at least one dim"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::DeviceMesh("cpu", {4, 0}), doctest::Contains("dim 1 of shape [4, 0] has size 0"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::DeviceMesh("cpu", {4, 2}, {"dp"}),
                       doctest::Contains("1 dim names ('dp',) for 2 dims (shape [4, 2])"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp", "pp"}),
                       doctest::Contains("3 dim names"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::DeviceMesh("cpu", {2, 2}, {"dp", "dp"}), doctest::Contains("'dp' appears twice"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::DeviceMesh("cpu", {2}, {}, {{0, 1}, {2}}),
                       doctest::Contains("fibre 1 has 1 ranks but shape [2] needs 2"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::DeviceMesh("cpu", {2}, {}, {{0, 1}, {1, 2}}),
                       doctest::Contains("rank 1 appears twice"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::DeviceMesh("cpu", {2}, {}, {{0, -1}}), doctest::Contains("rank -1"), ts::Error);
  CHECK_THROWS_AS(ts::DeviceMesh("", {2}), ts::Error);
}

TEST_CASE("lookup errors") {
  const ts::DeviceMesh named = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  CHECK_THROWS_WITH_AS(named.group("pp"), doctest::Contains("no dim named 'pp'; the dims are ('dp', 'tp')"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(named.local_rank("pp"), doctest::Contains("'pp'"), ts::Error);
  CHECK_THROWS_WITH_AS(named.group(2), doctest::Contains("dim 2 is out of range"), ts::Error);
  CHECK_THROWS_AS(named.size(-1), ts::Error);
  CHECK_THROWS_WITH_AS(named.coordinate_of(8), doctest::Contains("rank 8 is not in the mesh"), ts::Error);
  const ts::DeviceMesh unnamed = ts::init_device_mesh("cpu", {4, 2});
  CHECK_THROWS_WITH_AS(unnamed.group("dp"), doctest::Contains("has no dim names"), ts::Error);
}

TEST_CASE("to_string and equality") {
  CHECK(ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"}).to_string() ==
        "DeviceMesh('cpu', [[0, 1], [2, 3]], mesh_dim_names=('dp', 'tp'))");
  CHECK(ts::init_device_mesh("cpu", {3}).to_string() == "DeviceMesh('cpu', [0, 1, 2])");
  CHECK(ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"})["dp"].to_string() ==
        "DeviceMesh('cpu', fibres=[[0, 2, 4, 6], [1, 3, 5, 7]], mesh_dim_names=('dp',))");
  CHECK(ts::init_device_mesh("cpu", {2, 2}) == ts::DeviceMesh("cpu", {2, 2}, {}, {{0, 1, 2, 3}}));
  CHECK_FALSE(ts::init_device_mesh("cpu", {2, 2}) == ts::init_device_mesh("cpu", {4}));
  CHECK_FALSE(ts::init_device_mesh("cpu", {2, 2}) == ts::init_device_mesh("cpu", {2, 2}, {"a", "b"}));
  CHECK_FALSE(ts::init_device_mesh("cpu", {2, 2}) == ts::DeviceMesh("cpu", {2, 2}, {}, {{3, 2, 1, 0}}));
  CHECK_FALSE(ts::init_device_mesh("cpu", {2}) == ts::DeviceMesh("cuda", {2}));
}

TEST_CASE("topology: the default for the world, or one given") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 4}, {"dp", "tp"});
  const ts::DeviceMesh ringed = mesh.with_topology(ts::Topology::ring(8));
  CHECK(ringed.topology().name() == "ring");
  CHECK(ringed == mesh);  // the topology is not part of a mesh's identity
  CHECK(ringed["tp"].topology().name() == "ring");
  CHECK_THROWS_WITH_AS(mesh.with_topology(ts::Topology::ring(4)), doctest::Contains("holds rank 7"),
                       ts::Error);
  struct RestoreDefault {
    ~RestoreDefault() { ts::set_default_topology(""); }
  } restore;
  ts::set_default_topology("nodes:4");
  CHECK(ts::init_device_mesh("cpu", {2, 4}).topology().name() == "nodes:4");
}

TEST_CASE("coordinates in meshes over fibres of scattered or shuffled ranks") {
  // Consecutive fibres are looked up by position; these are not consecutive, so every rank is searched.
  const ts::DeviceMesh strided("cpu", {2, 2}, {}, {{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(strided.coordinate_of(0) == std::vector<int64_t>{0, 0});
  CHECK(strided.coordinate_of(2) == std::vector<int64_t>{0, 1});
  CHECK(strided.coordinate_of(6) == std::vector<int64_t>{1, 1});
  CHECK(strided.coordinate_of(5) == std::vector<int64_t>{1, 0});
  const ts::DeviceMesh shuffled("cpu", {3}, {}, {{2, 0, 1}});
  CHECK(shuffled.coordinate_of(2) == std::vector<int64_t>{0});
  CHECK(shuffled.coordinate_of(0) == std::vector<int64_t>{1});
  CHECK(shuffled.coordinate_of(1) == std::vector<int64_t>{2});
  const ts::DeviceMesh offset("cpu", {2}, {}, {{4, 5}, {6, 7}});
  CHECK(offset.coordinate_of(5) == std::vector<int64_t>{1});
  CHECK(offset.coordinate_of(6) == std::vector<int64_t>{0});
  CHECK_THROWS_WITH_AS(offset.coordinate_of(3), doctest::Contains("rank 3 is not in the mesh"), ts::Error);
}

TEST_CASE("groups asked of a mesh before with_topology, flatten or slicing are not the new mesh's") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 4}, {"dp", "tp"});
  // Asked first (a mesh keeps the groups it hands out), then the mesh is changed.
  REQUIRE(mesh.group(1).fibres() == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  REQUIRE(mesh.group(0).fibres() == std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(mesh.group(1).topology() == nullptr);  // the calling world's topology, none of its own

  const ts::DeviceMesh ringed = mesh.with_topology(ts::Topology::ring(8));
  REQUIRE(ringed.group(1).topology() != nullptr);
  CHECK(ringed.group(1).topology()->name() == "ring");
  CHECK(mesh.group(1).topology() == nullptr);  // the original is unchanged

  const ts::DeviceMesh flat = mesh.flatten();
  CHECK(flat.group(0).fibres() == std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6, 7}});

  const ts::DeviceMesh tp = mesh["tp"];
  CHECK(tp.group(0).fibres() == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  const ts::DeviceMesh dp = mesh["dp"];
  CHECK(dp.group(0).fibres() == std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});

  // A copy shares what was made and answers the same.
  const ts::DeviceMesh copy = mesh;  // NOLINT(performance-unnecessary-copy-initialization): under test
  CHECK(copy.group(0) == mesh.group(0));
  CHECK(copy.group(1).fibres() == mesh.group(1).fibres());
}

TEST_CASE("a mesh moved from keeps its fibres and groups") {
  ts::DeviceMesh mesh("cpu", {2, 3});
  // NOLINTNEXTLINE(performance-move-const-arg): the move is under test (DeviceMesh copies on it).
  const ts::DeviceMesh moved = std::move(mesh);
  // NOLINTNEXTLINE(bugprone-use-after-move): what a moved-from mesh answers is the point of the test.
  CHECK(mesh.fibres() == std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5}});
  CHECK(mesh.group(1).fibres() == moved.group(1).fibres());
  CHECK(moved.ranks() == std::vector<int>{0, 1, 2, 3, 4, 5});
}
