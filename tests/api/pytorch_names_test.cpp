// The spellings a PyTorch DTensor user types (docs/user-guide.md, "Where the C++ API differs"), used the way
// such a user writes them. Each is checked against Tessera's own name for the same thing and, where it
// computes a value, against that value worked out independently (by hand or on the plain tensor).
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

template <class T>
std::string printed(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

// x[i][j] = i * 8 + j: distinct values, so a misplaced element shows.
ts::Tensor numbered(int64_t rows, int64_t cols, int64_t start = 0) {
  ts::DisabledLocalMode plain;
  return (ts::arange(rows * cols).reshape({rows, cols}) + start).to(ts::kFloat32);
}

ts::Tensor plain_full(const ts::DTensor& t) {
  ts::Tensor full = t.full_tensor().reconcile();
  return full;
}

}  // namespace

TEST_CASE("DeviceMesh: get_local_rank, get_group, mesh_dim_names, get_coordinate, size, ndim, device_type") {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  // Row-major (4, 2): rank r sits at (r / 2, r % 2).
  for (int r = 0; r < 8; ++r) {
    CHECK(mesh.get_local_rank("tp").local().at(r) == r % 2);
    CHECK(mesh.get_local_rank(0).local().at(r) == r / 2);
    CHECK(mesh.get_coordinate()[0].local().at(r) == r / 2);
    CHECK(mesh.get_coordinate()[1].local().at(r) == r % 2);
  }
  CHECK(mesh.get_local_rank("dp").local().values() == mesh.local_rank("dp").local().values());
  CHECK(mesh.get_group("dp") == mesh.group("dp"));
  CHECK(mesh.get_group("tp").fibres() == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(mesh.get_group(0).fibres() == std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(mesh.mesh_dim_names() == std::vector<std::string>{"dp", "tp"});
  CHECK(mesh.size(1) == 2);
  CHECK(mesh.size() == 8);
  CHECK(mesh.ndim() == 2);
  CHECK(mesh.device_type() == "cpu");
  // Without a dim, as in PyTorch, only for a 1-d mesh.
  const ts::DeviceMesh tp = mesh["tp"];
  for (int r = 0; r < 8; ++r) CHECK(tp.get_local_rank().local().at(r) == r % 2);
  CHECK(tp.get_group() == mesh.group("tp"));
  CHECK_THROWS_WITH_AS(mesh.get_local_rank(), doctest::Contains("the mesh has 2 dims ([4, 2]); name the dim"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(mesh.get_group(), doctest::Contains("get_group: the mesh has 2 dims"), ts::Error);
  CHECK(printed(mesh) == "DeviceMesh('cpu', [[0, 1], [2, 3], [4, 5], [6, 7]], mesh_dim_names=('dp', 'tp'))");
}

TEST_CASE("get_rank and get_world_size") {
  {
    ts::LocalMode mode(3);
    CHECK(ts::get_world_size() == 3);
    CHECK(ts::get_rank().local().values() == std::map<int, int64_t>{{0, 0}, {1, 1}, {2, 2}});
  }
  ts::LocalMode one(1);
  CHECK(ts::get_world_size() == 1);
  CHECK(ts::get_rank().as_int() == 0);
}

TEST_CASE("init_device_mesh with a device type no backend serves lists the loaded backends") {
  ts::LocalMode mode(2);
  CHECK_THROWS_WITH_AS(
      ts::init_device_mesh("cuda", {2}),
      doctest::Contains("no backend serves device type 'cuda'; loaded backends: cpu (kDLCPU)"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::init_device_mesh("tpu", {2}), doctest::Contains("device type 'tpu'"), ts::Error);
  // The mode's world is untouched: a cpu mesh still works.
  CHECK(ts::init_device_mesh("cpu", {2}).size() == 2);
}

TEST_CASE(
    "DTensor methods: sum, mean, max, min, t, view, reshape, size, numel, dim, dtype, to, device_mesh") {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  const ts::Tensor x = numbered(6, 8);  // uneven over dp: rows 2, 2, 2, 0
  const ts::DTensor dt = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(1)});
  ts::DisabledLocalMode plain;

  // sum of 0..47 = 47 * 48 / 2; row i sums to 64 i + 28; column j to 6 j + 120.
  CHECK(plain_full(dt.sum()).item<float>() == 1128.f);
  CHECK(ts::equal(plain_full(dt.sum()), plain_full(ts::sum(dt))));
  CHECK(ts::equal(plain_full(dt.sum({1})), ts::tensor({28.f, 92.f, 156.f, 220.f, 284.f, 348.f})));
  CHECK(plain_full(dt.sum({0}, /*keepdim=*/true)).sizes() == ts::Shape{1, 8});
  CHECK(ts::equal(plain_full(dt.sum({0}, true)),
                  ts::tensor({{120.f, 126.f, 132.f, 138.f, 144.f, 150.f, 156.f, 162.f}})));
  CHECK(plain_full(dt.mean()).item<float>() == doctest::Approx(23.5));
  CHECK(ts::allclose(plain_full(dt.mean({0})), plain_full(ts::mean(dt, {0}))));
  CHECK(ts::equal(plain_full(dt.mean({0})), ts::tensor({20.f, 21.f, 22.f, 23.f, 24.f, 25.f, 26.f, 27.f})));
  CHECK(plain_full(dt.max()).item<float>() == 47.f);
  CHECK(plain_full(dt.min()).item<float>() == 0.f);
  CHECK(ts::equal(plain_full(dt.max({1})), ts::tensor({7.f, 15.f, 23.f, 31.f, 39.f, 47.f})));
  CHECK(ts::equal(plain_full(dt.min({0})), ts::tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f})));

  const ts::DTensor dtt = dt.t();
  CHECK(dtt.size() == ts::Shape{8, 6});
  CHECK(dtt.placements() == ts::transpose(dt, 0, 1).placements());
  CHECK(ts::equal(plain_full(dtt), x.t()));
  CHECK(ts::equal(plain_full(dt.reshape({48})), x.reshape({48})));
  CHECK(ts::equal(plain_full(dt.reshape({8, 6})), plain_full(ts::reshape(dt, {8, 6}))));
  const ts::DTensor rows = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()});
  CHECK(ts::equal(plain_full(rows.view({6, 2, 4})), x.view({6, 2, 4})));
  CHECK(rows.view({6, 2, 4}).placements()[0].is_shard(0));
  CHECK_THROWS_WITH_AS(dt.reshape({6, 2, 4}).t(), doctest::Contains("at most 2 dims, got 3"), ts::Error);

  CHECK(dt.size() == ts::Shape{6, 8});
  CHECK(dt.size() == dt.shape());
  CHECK(dt.size(1) == 8);
  CHECK(dt.size(-2) == 6);
  CHECK(dt.numel() == 48);
  CHECK(dt.dim() == 2);
  CHECK(dt.dtype() == ts::kFloat32);
  CHECK(dt.device_mesh() == mesh);
  const ts::DTensor wide = dt.to(ts::kFloat64);
  CHECK(wide.dtype() == ts::kFloat64);
  CHECK(wide.placements() == dt.placements());
  CHECK(ts::equal(plain_full(wide), x.to(ts::kFloat64)));
  CHECK(dt.to(ts::kFloat32).to_local().shard(3).current_address() ==
        dt.to_local().shard(3).current_address());
  // A cast of a Partial reduces it first: the cast of the sum, not the sum of the cast terms.
  const ts::DTensor partial = ts::sum(dt, {1});
  CHECK(partial.placements()[1].is_partial());
  const ts::DTensor cast = partial.to(ts::kInt64);
  CHECK(cast.placements()[1].is_replicate());
  CHECK(ts::equal(plain_full(cast), ts::tensor({28.f, 92.f, 156.f, 220.f, 284.f, 348.f}).to(ts::kInt64)));
}

TEST_CASE("DTensor::from_local, and from_local of a plain tensor") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  const ts::Tensor local = ts::rank_map([](int rank) { return ts::full({2, 3}, float(rank + 1)); });
  const ts::DTensor a = ts::DTensor::from_local(local, mesh, {ts::Shard(0), ts::Replicate()});
  const ts::DTensor b = ts::from_local(local, mesh, {ts::Shard(0), ts::Replicate()});
  CHECK(a.size() == b.size());
  CHECK(a.size() == ts::Shape{4, 3});
  CHECK(ts::equal(a.to_local(), b.to_local()));

  // A plain tensor is every rank's local value.
  ts::Tensor p;
  {
    ts::DisabledLocalMode plain;
    p = numbered(2, 3);
  }
  const ts::DTensor rows = ts::DTensor::from_local(p, mesh, {ts::Shard(0), ts::Replicate()});
  CHECK(rows.size() == ts::Shape{4, 3});
  for (int r = 0; r < 4; ++r) CHECK(ts::equal(rows.to_local().shard(r), p));
  ts::DisabledLocalMode plain;
  CHECK(ts::equal(plain_full(rows),
                  ts::tensor({{0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}, {0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}})));
  const ts::DTensor replicated = ts::from_local(p, mesh, {ts::Replicate(), ts::Replicate()});
  CHECK(replicated.size() == ts::Shape{2, 3});
  // Writing one rank's shard leaves the plain tensor and the other ranks alone.
  rows.to_local().shard(1).fill_(-1.f);
  CHECK(ts::equal(p, numbered(2, 3)));
  CHECK(ts::equal(rows.to_local().shard(0), numbered(2, 3)));
  CHECK(ts::equal(rows.to_local().shard(1), ts::full({2, 3}, -1.f)));
  // A plain tensor that requires grad cannot give each rank its own gradient.
  const ts::Tensor leaf = ts::ones({2, 3}).set_requires_grad(true);
  CHECK_THROWS_WITH_AS(ts::from_local(leaf, mesh, {ts::Shard(0), ts::Replicate()}),
                       doctest::Contains("the plain tensor requires grad"), ts::Error);
}

TEST_CASE("scalar-first arithmetic, and plain tensors mixed with DTensors") {
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ts::Tensor x = numbered(4, 2, 1);  // 1..8: no zero to divide by
  const ts::DTensor dt = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  ts::DisabledLocalMode plain;
  CHECK(ts::equal(plain_full(2.f * dt), plain_full(dt * 2.f)));
  CHECK(ts::equal(plain_full(2.f * dt), x * 2.f));
  CHECK(ts::equal(plain_full(10.f - dt), ts::tensor({{9.f, 8.f}, {7.f, 6.f}, {5.f, 4.f}, {3.f, 2.f}})));
  CHECK(ts::equal(plain_full(1 + dt), x + 1));
  CHECK(ts::allclose(plain_full(8.f / dt),
                     ts::tensor({{8.f, 4.f}, {8.f / 3, 2.f}, {1.6f, 8.f / 6}, {8.f / 7, 1.f}})));
  CHECK((2.f * dt).placements() == dt.placements());

  // A Partial: s * P stays Partial (linear); s - P and s / P reduce first.
  const ts::DTensor cols = ts::distribute_tensor(x, mesh, {ts::Shard(1)});
  const ts::DTensor partial = ts::sum(cols, {1});  // row sums 3, 7, 11, 15, pending over the mesh
  REQUIRE(partial.placements()[0].is_partial());
  CHECK((3.f * partial).placements()[0].is_partial());
  CHECK(ts::equal(plain_full(3.f * partial), ts::tensor({9.f, 21.f, 33.f, 45.f})));
  CHECK((1.f - partial).placements()[0].is_replicate());
  CHECK(ts::equal(plain_full(1.f - partial), ts::tensor({-2.f, -6.f, -10.f, -14.f})));
  CHECK(ts::equal(plain_full(30.f / partial), ts::tensor({10.f, 30.f / 7, 30.f / 11, 2.f})));

  // A 0-d plain tensor acts as a scalar, on either side; a larger one must be distributed first.
  const ts::Tensor two = ts::tensor(2.f);
  CHECK(ts::equal(plain_full(two * dt), x * 2.f));
  CHECK(ts::equal(plain_full(dt - two), x - 2.f));
  CHECK(ts::equal(plain_full(two - dt), 2.f - x));
  const ts::Tensor row = ts::ones({2});
  CHECK_THROWS_WITH_AS(dt + row, doctest::Contains("distribute the tensor first"), ts::Error);
  CHECK_THROWS_WITH_AS(row * dt,
                       doctest::Contains("mul: got a DTensor and a plain tensor of 2 elements (shape [2])"),
                       ts::Error);
}

TEST_CASE("zeros_like, ones_like, empty_like and full_like of a DTensor keep its layout") {
  ts::LocalMode mode(6);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3, 2}, {"dp", "tp"});
  const ts::DTensor dt = ts::distribute_tensor(numbered(5, 4), mesh, {ts::Shard(0), ts::Shard(1)});
  const ts::DTensor zeros = ts::zeros_like(dt);
  CHECK(zeros.placements() == dt.placements());
  CHECK(zeros.size() == ts::Shape{5, 4});
  for (int r = 0; r < 6; ++r) CHECK(zeros.to_local().shard(r).sizes() == dt.to_local().shard(r).sizes());
  const ts::DTensor sevens = ts::full_like(dt, 7, ts::TensorOptions().dtype(ts::kInt32));
  CHECK(sevens.dtype() == ts::kInt32);
  const ts::DTensor empty = ts::empty_like(dt);
  CHECK(empty.placements() == dt.placements());
  CHECK(empty.size() == dt.size());
  // A Partial mesh dim comes back Replicate: ones_like of P(sum) must be ones, not the mesh size.
  const ts::DTensor partial = ts::sum(dt, {1}, true);
  REQUIRE(partial.placements()[1].is_partial());
  const ts::DTensor ones = ts::ones_like(partial);
  CHECK(ones.placements()[0].is_shard(0));
  CHECK(ones.placements()[1].is_replicate());
  ts::DisabledLocalMode plain;
  CHECK(ts::equal(plain_full(zeros), ts::zeros({5, 4})));
  CHECK(ts::equal(plain_full(sevens), ts::full({5, 4}, 7, ts::TensorOptions().dtype(ts::kInt32))));
  CHECK(ts::equal(plain_full(ones), ts::ones({5, 1})));
}

TEST_CASE("cat and stack of DTensors follow the sharding rules") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  const ts::Tensor x = numbered(3, 4), y = numbered(3, 4, 100), z = numbered(5, 4, 200);
  const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(1)});
  const ts::DTensor dy = ts::distribute_tensor(y, mesh, {ts::Shard(0), ts::Shard(1)});
  const ts::DTensor dz = ts::distribute_tensor(z, mesh, {ts::Shard(0), ts::Replicate()});
  ts::Tensor rows, cols, stacked, stacked_last;
  {
    ts::DisabledLocalMode plain;
    rows = ts::cat({x, y, z}, 0);
    cols = ts::cat({x, y}, 1);
    stacked = ts::stack({x, y}, 0);
    stacked_last = ts::stack({x, y}, 2);
  }

  // Along a sharded dim: those mesh dims are redistributed first.
  ts::DTensor joined = [&] {
    const ts::CommCounter counter;
    ts::DTensor out = ts::cat({dx, dy, dz}, 0);
    CHECK(counter.implicit_redistributions().size() >= 1);
    return out;
  }();
  CHECK(joined.size() == ts::Shape{11, 4});
  CHECK_FALSE(joined.placements()[0].is_shard(0));
  // Along another dim the shard stays, without communication.
  const ts::DTensor rx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()});
  const ts::DTensor ry = ts::distribute_tensor(y, mesh, {ts::Shard(0), ts::Replicate()});
  ts::DTensor side = [&] {
    const ts::CommCounter counter;
    ts::DTensor out = ts::cat({rx, ry}, 1);
    CHECK(counter.calls() == 0);
    CHECK(counter.implicit_redistributions().empty());
    return out;
  }();
  CHECK(side.placements()[0].is_shard(0));
  CHECK(side.size() == ts::Shape{3, 8});
  // stack's new dim shifts the shard dims at and after it.
  const ts::DTensor pair = ts::stack({dx, dy}, 0);
  CHECK(pair.size() == ts::Shape{2, 3, 4});
  CHECK(pair.placements()[0].is_shard(1));
  CHECK(pair.placements()[1].is_shard(2));
  const ts::DTensor last = ts::stack({dx, dy}, -1);
  CHECK(last.placements()[0].is_shard(0));
  CHECK(last.placements()[1].is_shard(1));

  ts::DisabledLocalMode plain;
  CHECK(ts::equal(plain_full(joined), rows));
  CHECK(ts::equal(plain_full(side), cols));
  CHECK(ts::equal(plain_full(pair), stacked));
  CHECK(ts::equal(plain_full(last), stacked_last));
  CHECK_THROWS_WITH_AS(ts::cat({dx, dz}, 1),
                       doctest::Contains("DTensor 1 has shape [5, 4] but DTensor 0 has shape [3, 4]"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::stack({dx, dz}), doctest::Contains("stack needs equal shapes"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::cat(std::vector<ts::DTensor>{}), doctest::Contains("at least one DTensor"),
                       ts::Error);
}

TEST_CASE("printing: std::cout << dt, << placement, << placements") {
  ts::LocalMode mode(2);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  const ts::DTensor dt = ts::distribute_tensor(numbered(3, 2), mesh, {ts::Shard(0)});
  CHECK(printed(dt) ==
        "DTensor(local_tensor=LocalTensor(\n"
        "  0: tensor([[0., 1.],\n"
        "             [2., 3.]])\n"
        "  1: tensor([[4., 5.]])), device_mesh=DeviceMesh('cpu', [0, 1]), placements=(Shard(dim=0),))");
  CHECK(printed(ts::Shard(1)) == "Shard(dim=1)");
  CHECK(printed(ts::Replicate()) == "Replicate()");
  CHECK(printed(ts::Partial("max")) == "Partial(max)");
  CHECK(printed(ts::BalancedShard(0)) == "BalancedShard(dim=0)");
  CHECK(printed(ts::Placements{ts::Shard(0), ts::Replicate()}) == "(Shard(dim=0), Replicate())");
  // Tessera's short form is still what to_string and placements_text give.
  CHECK(ts::Shard(1).to_string() == "S(1)");
  CHECK(ts::placements_text({ts::Shard(0), ts::Partial()}) == "S(0),P(sum)");
}

TEST_CASE("placement text: PyTorch's forms parse as Tessera's") {
  CHECK(ts::Placement::parse("Shard(dim=0)") == ts::Shard(0));
  CHECK(ts::Placement::parse("Shard(2)") == ts::Shard(2));
  CHECK(ts::Placement::parse("Shard(dim=-1)") == ts::Shard(-1));
  CHECK(ts::Placement::parse("Replicate()") == ts::Replicate());
  CHECK(ts::Placement::parse("Replicate") == ts::Replicate());
  CHECK(ts::Placement::parse("Partial(sum)") == ts::Partial("sum"));
  CHECK(ts::Placement::parse("Partial()") == ts::Partial("sum"));
  CHECK(ts::Placement::parse("Partial(reduce_op=max)") == ts::Partial("max"));
  CHECK(ts::Placement::parse("Partial('avg')") == ts::Partial("avg"));
  CHECK(ts::Placement::parse("BalancedShard(dim=1)") == ts::BalancedShard(1));
  CHECK(ts::parse_placements("(Shard(dim=0), Replicate())") == ts::parse_placements("S(0),R"));
  CHECK(ts::parse_placements("(Shard(dim=1),)") == ts::Placements{ts::Shard(1)});
  CHECK(ts::parse_placements("Shard(dim=0), Partial(min)") ==
        ts::Placements{ts::Shard(0), ts::Partial("min")});
  // Every placement prints in a form that parses back to it, in both spellings.
  for (const ts::Placement& p : {ts::Shard(0), ts::Shard(3), ts::Replicate(), ts::Partial("avg"),
                                 ts::Partial("bxor"), ts::BalancedShard(2)}) {
    CHECK(ts::Placement::parse(p.repr()) == p);
    CHECK(ts::Placement::parse(p.to_string()) == p);
  }
  const ts::Placements mixed = {ts::BalancedShard(1), ts::Partial("max"), ts::Replicate()};
  CHECK(ts::parse_placements(ts::placements_repr(mixed)) == mixed);

  CHECK_THROWS_WITH_AS(ts::Placement::parse("Shard()"),
                       doctest::Contains("Shard needs a tensor dim, e.g. S(0) or Shard(dim=0)"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::parse("Shard(dim=x)"), doctest::Contains("needs a tensor dim"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::parse("Replicate(0)"), doctest::Contains("Replicate takes no argument"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::parse("Partial(mean)"), doctest::Contains("unknown reduce op 'mean'"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(
      ts::Placement::parse("shard(0)"),
      doctest::Contains("unknown prefix 'shard'; known forms: B(0), P(sum), R, S(0), SS(0,<arguments>) or "
                        "BalancedShard(dim=0), Partial(sum), Replicate(), Shard(dim=0), "
                        "StridedShard(dim=0, <arguments>)"),
      ts::Error);
}

TEST_CASE("gradients flow through the PyTorch-spelled DTensor ops") {
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::DTensor w = ts::distribute_tensor(numbered(5, 2), mesh, {ts::Shard(0)});
  w.requires_grad_();
  // loss = sum(cat(w, 2 w)) + sum(3 - w.t()) + mean(w): d/dw = 1 + 2 - 1 + 1/10 at every element.
  const ts::DTensor loss = ts::cat({w, 2.f * w}, 1).sum() + (3.f - w.t()).sum() + w.mean();
  loss.backward();
  ts::DisabledLocalMode plain;
  CHECK(ts::allclose(plain_full(w.grad()), ts::full({5, 2}, 2.1f)));
}
