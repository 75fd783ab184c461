// distribute -> redistribute through every placement pair -> full_tensor, against the original
// tensor; golden transitions computed by hand; bad input.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "layout_oracle.hpp"

namespace ts = tessera;
using layout_oracle::check_layout;
using layout_oracle::values;

namespace {

// Every placement one mesh dim may take for a tensor of `ndim` dims (Partial is reached by ops).
std::vector<ts::Placement> choices(int64_t ndim) {
  std::vector<ts::Placement> all = {ts::Replicate()};
  for (int64_t d = 0; d < ndim; ++d) {
    all.push_back(ts::Shard(d));
    all.push_back(ts::BalancedShard(d));
  }
  return all;
}

// Every placement list for a mesh of `mesh_ndim` dims.
std::vector<ts::Placements> all_placements(int64_t mesh_ndim, int64_t ndim) {
  std::vector<ts::Placements> result = {{}};
  for (int64_t i = 0; i < mesh_ndim; ++i) {
    std::vector<ts::Placements> next;
    for (const ts::Placements& prefix : result)
      for (const ts::Placement& p : choices(ndim)) {
        ts::Placements extended = prefix;
        extended.push_back(p);
        next.push_back(extended);
      }
    result = next;
  }
  return result;
}

void round_trips(const std::vector<int64_t>& mesh_shape, const ts::Shape& tensor_shape, size_t stride) {
  int world = 1;
  for (int64_t s : mesh_shape) world *= static_cast<int>(s);
  ts::LocalMode mode(world);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", mesh_shape);
  ts::Tensor original;
  {
    auto off = mode.disable();
    int64_t n = 1;
    for (int64_t s : tensor_shape) n *= s;
    original = ts::arange(n).reshape(tensor_shape).to(ts::kFloat32);
  }
  const std::vector<ts::Placements> all =
      all_placements(static_cast<int64_t>(mesh_shape.size()), original.dim());
  // Every source placement, to a spread of targets (stride keeps large meshes fast).
  for (size_t a = 0; a < all.size(); ++a) {
    const ts::DTensor source = ts::distribute_tensor(original, mesh, all[a]);
    check_layout(source, original, 0.0, "distributed " + ts::placements_text(all[a]));
    for (size_t b = a % stride; b < all.size(); b += stride) {
      CAPTURE(ts::placements_text(all[a]));
      CAPTURE(ts::placements_text(all[b]));
      const ts::DTensor moved = source.redistribute(all[b]);
      CHECK(moved.placements() == all[b]);
      // Every shard is what the layout arithmetic (written out in the oracle) gives it.
      check_layout(moved, original);
    }
  }
}

}  // namespace

TEST_CASE("round trips on 1-d meshes, including sizes smaller than the mesh and 0") {
  round_trips({1}, {3, 2}, 1);
  round_trips({3}, {10, 2}, 1);
  round_trips({3}, {2, 5}, 1);
  round_trips({4}, {0, 3}, 1);
  round_trips({4}, {9}, 1);
}

TEST_CASE("round trips on 2-d meshes") {
  round_trips({2, 2}, {10, 3}, 1);
  round_trips({4, 2}, {6, 5}, 3);
}

TEST_CASE("round trips on a 3-d mesh") { round_trips({2, 3, 4}, {5, 7}, 37); }

TEST_CASE("golden: 10 rows S(0) on 4 ranks back to R, and (S0,S0)->(R,S0) on 2x2") {
  ts::LocalMode mode(4);
  ts::Tensor rows;
  {
    auto off = mode.disable();
    rows = ts::arange(10).reshape({10, 1});
  }
  ts::DeviceMesh line = ts::init_device_mesh("cpu", {4});
  ts::DTensor d = ts::distribute_tensor(rows, line, {ts::Shard(0)});
  CHECK(ts::equal(d.redistribute({ts::Replicate()}).to_local().reconcile(), rows));
  ts::DeviceMesh square = ts::init_device_mesh("cpu", {2, 2});
  ts::DTensor nested = ts::distribute_tensor(rows, square, {ts::Shard(0), ts::Shard(0)});
  ts::DTensor half = nested.redistribute({ts::Replicate(), ts::Shard(0)});
  CHECK(ts::equal(half.full_tensor().reconcile(), rows));
  // (R, S0): mesh dim 1 splits all 10 rows: 5 and 5.
  CHECK(half.to_local().shard(0).size(0) == 5);
  CHECK(half.to_local().shard(1).size(0) == 5);
}

TEST_CASE("golden: mesh (2,3,4) [R,S(0),S(2)] of an [8,16,32] tensor round-trips exactly") {
  ts::LocalMode mode(24);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 3, 4}, {"pp", "dp", "tp"});
  ts::Tensor t;
  {
    auto off = mode.disable();
    ts::Generator g(3);
    t = ts::randn({8, 16, 32}, g);
  }
  ts::DTensor d = ts::distribute_tensor(t, mesh, {ts::Replicate(), ts::Shard(0), ts::Shard(2)});
  CHECK(ts::equal(d.full_tensor().reconcile(), t));
}

TEST_CASE("partial placements reduce on redistribute") {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
  // Rank r holds 10 r + (0..5) as [3,2]: every element differs, within and across ranks. As P(sum)
  // element i is 4 i + 60; as P(max) it is i + 30.
  ts::Tensor terms = ts::rank_map([](int r) {
    return (ts::arange(6) + 10 * r).reshape({3, 2}).to(ts::kFloat32);
  });
  ts::Tensor sum, max;
  {
    ts::DisabledLocalMode plain;
    sum = ts::tensor({{60.f, 64.f}, {68.f, 72.f}, {76.f, 80.f}});
    max = ts::tensor({{30.f, 31.f}, {32.f, 33.f}, {34.f, 35.f}});
  }
  ts::DTensor p = ts::from_local(terms, mesh, {ts::Partial()});
  check_layout(p, sum);
  ts::CommCounter counter;
  ts::DTensor s = p.redistribute({ts::Shard(0)});
  CHECK(counter.calls("reduce_scatter") == 1);  // P -> S is one reduce_scatter
  CHECK(counter.calls() == 1);
  // 3 rows over 4 ranks: 1,1,1,0; rank r holds row r.
  CHECK(values(s.to_local().shard(0)) == std::vector<double>{60, 64});
  CHECK(values(s.to_local().shard(2)) == std::vector<double>{76, 80});
  CHECK(s.to_local().shard(3).size(0) == 0);
  check_layout(s, sum);
  ts::DTensor pmax = ts::from_local(terms, mesh, {ts::Partial("max")});
  check_layout(pmax, max);
  ts::DTensor balanced = pmax.redistribute({ts::BalancedShard(1)});  // 2 columns over 4: 1,1,0,0
  CHECK(values(balanced.to_local().shard(1)) == std::vector<double>{31, 33, 35});
  check_layout(balanced, max);
  // S(d) -> S(e) is one all_to_all.
  ts::Tensor grid;
  {
    ts::DisabledLocalMode plain;
    grid = ts::arange(12).reshape({4, 3});
  }
  ts::DTensor rows = ts::distribute_tensor(grid, mesh, {ts::Shard(0)});
  ts::CommCounter moves;
  ts::DTensor cols = rows.redistribute({ts::Shard(1)});
  CHECK(moves.calls("all_to_all") == 1);
  CHECK(moves.calls() == 1);
  // 3 columns over 4 ranks: rank 1 holds column 1 (1, 4, 7, 10).
  CHECK(values(cols.to_local().shard(1)) == std::vector<double>{1, 4, 7, 10});
  check_layout(cols, grid);
  CHECK(p.redistribute({ts::Partial()}).placements()[0].is_partial());  // keeping it is fine
  // Nested partial and shard on a 2-d mesh: rows by mesh dim 0, terms over mesh dim 1.
  ts::DeviceMesh square = ts::init_device_mesh("cpu", {2, 2});
  ts::Tensor halves = ts::rank_map([](int r) {
    // Rank (i, j) holds rows of block i plus j * 100 (the sum over j adds 100 to block i's rows).
    const int64_t i = r / 2, j = r % 2;
    return (ts::arange(i == 0 ? 4 : 2) + 10 * i + 100 * j).reshape({i == 0 ? 2 : 1, 2}).to(ts::kFloat32);
  });
  ts::Tensor expected;
  {
    ts::DisabledLocalMode plain;
    expected = ts::tensor({{100.f, 102.f}, {104.f, 106.f}, {120.f, 122.f}});
  }
  ts::DTensor mixed = ts::from_local(halves, square, {ts::Shard(0), ts::Partial()}, ts::Shape{3, 2});
  for (const ts::Placements& to : std::vector<ts::Placements>{{ts::Replicate(), ts::Replicate()},
                                                              {ts::Shard(0), ts::Shard(0)},
                                                              {ts::Replicate(), ts::Shard(1)},
                                                              {ts::Shard(1), ts::BalancedShard(0)}}) {
    CAPTURE(ts::placements_text(to));
    check_layout(mixed.redistribute(to), expected);
  }
}

TEST_CASE("redistribute errors") {
  ts::LocalMode mode(2);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::Tensor x;
  {
    auto off = mode.disable();
    x = ts::ones({4, 2});
  }
  ts::DTensor s = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  CHECK_THROWS_WITH_AS(s.redistribute({ts::Partial()}), doctest::Contains("a shard cannot become a partial"),
                       ts::Error);
  ts::DTensor r = ts::distribute_tensor(x, mesh, {ts::Replicate()});
  CHECK_THROWS_WITH_AS(r.redistribute({ts::Partial()}), doctest::Contains("internal only"), ts::Error);
  ts::DTensor p = ts::from_local(ts::ones({4, 2}), mesh, {ts::Partial()});
  CHECK_THROWS_WITH_AS(p.redistribute({ts::Partial("max")}), doctest::Contains("cannot change its op"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(s.redistribute({ts::Shard(0), ts::Replicate()}), doctest::Contains("2 placements"),
                       ts::Error);
  ts::DeviceMesh other = ts::init_device_mesh("cpu", {2}, {"x"});
  CHECK_THROWS_WITH_AS(s.redistribute(other, {ts::Replicate()}), doctest::Contains("moving between meshes"),
                       ts::Error);
}

TEST_CASE("distribute_tensor and from_local errors") {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2});
  ts::Tensor x;
  {
    auto off = mode.disable();
    x = ts::ones({4, 4});
  }
  CHECK_THROWS_WITH_AS(ts::distribute_tensor(x, mesh, {ts::Shard(0)}),
                       doctest::Contains("1 placements (S(0)) for a mesh of 2 dims"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::distribute_tensor(x, mesh, {ts::Shard(2), ts::Replicate()}),
                       doctest::Contains("shard dim 2 is out of range for a tensor of 2 dims"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::distribute_tensor(x, mesh, {ts::Partial(), ts::Replicate()}),
                       doctest::Contains("P(sum) is not allowed"), ts::Error);
  // Negative dims are normalised.
  CHECK(ts::distribute_tensor(x, mesh, {ts::Shard(-1), ts::Replicate()}).placements()[0] == ts::Shard(1));
  // Uneven local shards need an explicit shape, and a wrong one is named.
  ts::Tensor uneven = ts::rank_map([](int r) { return ts::ones({r == 3 ? 1 : 3, 2}); });
  ts::DeviceMesh line = ts::init_device_mesh("cpu", {4});
  CHECK_THROWS_WITH_AS(ts::from_local(uneven, line, {ts::Shard(0)}), doctest::Contains("differ per rank"),
                       ts::Error);
  CHECK(ts::from_local(uneven, line, {ts::Shard(0)}, ts::Shape{10, 2}).shape() == ts::Shape{10, 2});
  CHECK_THROWS_WITH_AS(
      ts::from_local(uneven, line, {ts::Shard(0)}, ts::Shape{11, 2}),
      doctest::Contains("rank 3 holds a shard of shape [1, 2], but S(0) of a [11, 2] tensor gives it [2, 2]"),
      ts::Error);
}

TEST_CASE("distribute_tensor of a local tensor scatters and broadcasts from group rank 0") {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  // Every rank holds a different tensor; rank 0's (the mesh's first rank) is the source.
  ts::Tensor per_rank = ts::rank_map([](int rank) {
    return ts::arange(30).reshape({10, 3}).to(ts::kFloat32) + 100 * rank;
  });
  ts::Tensor source;
  {
    auto off = mode.disable();
    source = ts::arange(30).reshape({10, 3}).to(ts::kFloat32);
  }
  for (const ts::Placements& placements : std::vector<ts::Placements>{{ts::Shard(0), ts::Shard(1)},
                                                                      {ts::Replicate(), ts::Shard(0)},
                                                                      {ts::BalancedShard(0), ts::Replicate()},
                                                                      {ts::Shard(0), ts::Shard(0)}}) {
    CAPTURE(ts::placements_text(placements));
    ts::CommCounter counter;
    const ts::DTensor d = ts::distribute_tensor(per_rank, mesh, placements);
    CHECK(ts::equal(d.full_tensor().reconcile(), source));
    CHECK(ts::equal(d.to_local(), ts::distribute_tensor(source, mesh, placements).to_local()));
    int64_t scatters = 0, broadcasts = 0;
    for (const auto& e : counter.entries()) {
      if (e.collective == "scatter") scatters += e.calls;
      if (e.collective == "broadcast") broadcasts += e.calls;
    }
    int64_t shard_dims = 0;
    for (const ts::Placement& p : placements) shard_dims += p.is_shard() ? 1 : 0;
    CHECK(scatters == shard_dims);
    CHECK(broadcasts == 2 - shard_dims);
  }
}
