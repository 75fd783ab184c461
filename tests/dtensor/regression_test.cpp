// Regression tests for DTensor defects found and fixed, each with its reproducer, checked against
// the dense op and an independent layout oracle.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <tessera/tessera.hpp>

#include "layout_oracle.hpp"

namespace ts = tessera;
using layout_oracle::check_layout;
using layout_oracle::values;

namespace {

// Distinct values, some negative, so that a max or min from the wrong block shows.
ts::Tensor distinct(const ts::Shape& shape, ts::DType dtype = ts::kFloat32) {
  ts::DisabledLocalMode plain;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  // i * 7 modulo m, m > n and coprime with 7: distinct values in a scrambled order.
  const int64_t m = (n + 3) % 7 == 0 ? n + 4 : n + 3;
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 7) % m - n / 2;
  return ts::from_values(v, shape).to(dtype);
}

ts::Tensor dense(const std::function<ts::Tensor()>& f) {
  ts::DisabledLocalMode plain;
  return f();
}

}  // namespace

TEST_CASE("regression: max and min over a sharded dim with empty shards (2 over 4 ranks: 1,1,0,0)") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh line = ts::init_device_mesh("cpu", {4});
  const ts::DeviceMesh square = ts::init_device_mesh("cpu", {2, 2});
  for (ts::DType dtype : {ts::kFloat32, ts::kInt64}) {
    CAPTURE(ts::dtype_name(dtype));
    const ts::Tensor x = distinct({2, 3}, dtype);
    const ts::DTensor rows = ts::distribute_tensor(x, line, {ts::Shard(0)});
    check_layout(ts::max(rows, {0}), dense([&] { return ts::max(x, {0}); }), 0.0, "max over S(0)");
    check_layout(ts::min(rows, {0}), dense([&] { return ts::min(x, {0}); }), 0.0, "min over S(0)");
    check_layout(ts::max(rows), dense([&] { return ts::max(x); }), 0.0, "max over all");
    check_layout(ts::min(rows, {0, 1}, true), dense([&] {
                   return ts::min(x, {0, 1}, true);
                 }),
                 0.0, "min keepdim");
    // Kept dims keep their shard even when a shard is empty.
    check_layout(ts::max(rows, {1}), dense([&] { return ts::max(x, {1}); }), 0.0,
                 "max over the unsharded dim");
    // Nested: 3 rows on (2,2) [S(0),S(0)] are 1,1,1,0.
    const ts::Tensor y = distinct({3, 2}, dtype);
    const ts::DTensor nested = ts::distribute_tensor(y, square, {ts::Shard(0), ts::Shard(0)});
    check_layout(ts::max(nested, {0}), dense([&] { return ts::max(y, {0}); }), 0.0, "nested max");
    check_layout(ts::min(nested), dense([&] { return ts::min(y); }), 0.0, "nested min");
  }
  // The golden layout 9/4 -> 3,3,3,0 and 12/8 -> ...,0,0 (balanced shards of 2 over 4 too).
  const ts::Tensor nine = distinct({9});
  check_layout(ts::max(ts::distribute_tensor(nine, line, {ts::Shard(0)})),
               dense([&] { return ts::max(nine); }));
  const ts::Tensor two = distinct({2, 2});
  check_layout(ts::min(ts::distribute_tensor(two, line, {ts::BalancedShard(1)}), {1}),
               dense([&] { return ts::min(two, {1}); }));
  // Shards that all hold something still reduce without communication first.
  ts::CommCounter counter;
  const ts::DTensor even = ts::max(ts::distribute_tensor(distinct({8, 2}), line, {ts::Shard(0)}), {0});
  CHECK(even.placements() == ts::Placements{ts::Partial("max")});
  CHECK(counter.calls() == 0);
}

TEST_CASE("regression: reshape of nested shards redistributes only what cannot follow") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh square = ts::init_device_mesh("cpu", {2, 2});
  const ts::Placements nested = {ts::Shard(0), ts::Shard(0)};
  SUBCASE("arange(4) on (2,2) [S(0),S(0)] to {2,2}") {
    const ts::Tensor x = dense([] { return ts::arange(4); });
    const ts::DTensor y = ts::reshape(ts::distribute_tensor(x, square, nested), {2, 2});
    check_layout(y, dense([&] { return x.reshape({2, 2}); }));
    // 2 rows over mesh dim 0 are 1 and 1; mesh dim 1 cannot split one row of [2,2] as it split 2 elements.
    CHECK(y.placements()[0] == ts::Shard(0));
  }
  SUBCASE("[6,2] -> [12]") {
    const ts::Tensor x = distinct({6, 2});
    const ts::DTensor y = ts::reshape(ts::distribute_tensor(x, square, nested), {12});
    check_layout(y, dense([&] { return x.reshape({12}); }));
    CHECK(y.placements()[0] == ts::Shard(0));  // 3 rows of 2 are 6 of 12: mesh dim 0 follows
  }
  SUBCASE("[6,5] -> [30]") {
    const ts::Tensor x = distinct({6, 5});
    const ts::DTensor y = ts::reshape(ts::distribute_tensor(x, square, nested), {30});
    check_layout(y, dense([&] { return x.reshape({30}); }));
    CHECK(y.placements()[0] == ts::Shard(0));
  }
  SUBCASE("[8,3] -> [24] keeps both nested shards (2 rows each, 6 elements each)") {
    const ts::Tensor x = distinct({8, 3});
    ts::CommCounter counter;
    const ts::DTensor y = ts::reshape(ts::distribute_tensor(x, square, nested), {24});
    CHECK(y.placements() == nested);
    CHECK(counter.calls() == 0);
    check_layout(y, dense([&] { return x.reshape({24}); }));
  }
  SUBCASE("2-d mesh, a split of a sharded dim: [12,2] S(0),S(1) -> [3,4,2]") {
    const ts::Tensor x = distinct({12, 2});
    const ts::DTensor y =
        ts::reshape(ts::distribute_tensor(x, square, {ts::Shard(0), ts::Shard(1)}), {3, 4, 2});
    check_layout(y, dense([&] { return x.reshape({3, 4, 2}); }));
  }
}

TEST_CASE("regression: distribute_tensor gives each rank only its part, copied once") {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2});
  const ts::Tensor x = distinct({9, 4});
  for (const ts::Placements& placements : std::vector<ts::Placements>{{ts::Shard(0), ts::Shard(1)},
                                                                      {ts::Shard(0), ts::Shard(0)},
                                                                      {ts::Replicate(), ts::BalancedShard(0)},
                                                                      {ts::Replicate(), ts::Replicate()},
                                                                      {ts::Shard(1), ts::Replicate()}}) {
    CAPTURE(ts::placements_text(placements));
    const ts::DTensor d = ts::distribute_tensor(x, mesh, placements);
    check_layout(d, x);
    for (const auto& [shard_rank, shard] : d.to_local().shards()) {
      const auto rank = shard_rank;  // named again: clang 14 cannot capture a structured binding
      CAPTURE(rank);
      CHECK(shard.is_contiguous());
      CHECK(shard.numel() == layout_oracle::expected_shard(x, placements, {4, 2}, rank).numel());
    }
    // Each shard is its own copy: writing one changes neither the source nor another rank.
    ts::Tensor first = d.to_local().shard(0);
    {
      ts::DisabledLocalMode plain;
      first.fill_(100.f);
    }
    CHECK(values(x) == values(distinct({9, 4})));
    CHECK(values(d.to_local().shard(1)) == values(layout_oracle::expected_shard(x, placements, {4, 2}, 1)));
  }
}

namespace {

// The process's peak resident memory so far (Linux), in bytes; 0 where unknown.
int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      int64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  return 0;
}

}  // namespace

TEST_CASE("regression: distributing a Shard layout needs memory for the shards, not world x size") {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {8});
  const int64_t rows = int64_t{1} << 21;  // 8M floats: 32 MiB
  const int64_t bytes = rows * 4 * 4;
  const ts::Tensor x = dense([&] { return ts::ones({rows, 4}); });
  const int64_t before = peak_resident_bytes();
  if (before == 0) return;  // no /proc: nothing to measure
  const ts::DTensor d = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  const int64_t growth = peak_resident_bytes() - before;
  // The shards take one tensor's worth; cloning per rank first took 8. (Growth of the peak only:
  // a peak set earlier in the process can hide growth, never invent it.)
  INFO("peak resident memory grew by " << growth << " bytes for a tensor of " << bytes << " bytes");
  CHECK(growth < 3 * bytes);
  CHECK(d.to_local().shard(7).size(0) == rows / 8);
}

TEST_CASE("regression: from_local on uneven shards without shape= says what to do") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh line = ts::init_device_mesh("cpu", {4});
  const ts::Tensor uneven = ts::rank_map([](int r) { return ts::ones({r == 3 ? 1 : 3, 2}); });
  try {
    (void)ts::from_local(uneven, line, {ts::Shard(0)});
    FAIL("from_local accepted uneven shards without a shape");
  } catch (const ts::Error& e) {
    const std::string message = e.what();
    CHECK(message.find("from_local") != std::string::npos);
    CHECK(message.find("differ per rank") != std::string::npos);
    CHECK(message.find("rank 0 holds [3, 2], rank 3 holds [1, 2]") != std::string::npos);
    CHECK(message.find("shape=") != std::string::npos);
    CHECK(message.find("sizes()") == std::string::npos);
  }
}

TEST_CASE("regression: visualize_sharding lists ranks with empty shards last, not as a block") {
  ts::LocalMode mode(4);
  const ts::DeviceMesh line = ts::init_device_mesh("cpu", {4});
  const ts::Tensor two = dense([] { return ts::arange(2); });
  CHECK(ts::visualize_sharding(ts::distribute_tensor(two, line, {ts::Shard(0)})) ==
        "DTensor of shape [2] placed S(0) on DeviceMesh('cpu', [0, 1, 2, 3])\n"
        "elements 0  rank 0\n"
        "elements 1  rank 1\n"
        "ranks 2,3 hold no elements\n");
  const ts::DeviceMesh square = ts::init_device_mesh("cpu", {2, 2});
  const ts::Tensor grid = dense([] { return ts::zeros({3, 1}); });
  CHECK(ts::visualize_sharding(ts::distribute_tensor(grid, square, {ts::Shard(0), ts::Shard(1)})) ==
        "DTensor of shape [3, 1] placed S(0),S(1) on DeviceMesh('cpu', [[0, 1], [2, 3]])\n"
        "          cols 0\n"
        "rows 0-1  rank 0\n"
        "rows 2    rank 2\n"
        "ranks 1,3 hold no elements\n");
}

TEST_CASE("regression: reshape with trailing size-1 and size-0 sharded dims, and of empty sharded tensors") {
  SUBCASE("mesh [1], [2,1] S(1) -> [2] (was a segfault)") {
    ts::LocalMode mode(1);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {1});
    const ts::Tensor x = distinct({2, 1});
    check_layout(ts::reshape(ts::distribute_tensor(x, mesh, {ts::Shard(1)}), {2}),
                 dense([&] { return x.reshape({2}); }));
    check_layout(ts::view(ts::distribute_tensor(x, mesh, {ts::Shard(1)}), {2}),
                 dense([&] { return x.reshape({2}); }));
  }
  SUBCASE("mesh [2], [1,1,0] R x [1,1,0] S(2) -> [0]") {
    ts::LocalMode mode(2);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
    const ts::Tensor x = distinct({1, 1, 0});
    const ts::DTensor product =
        ts::distribute_tensor(x, mesh, {ts::Replicate()}) * ts::distribute_tensor(x, mesh, {ts::Shard(2)});
    const ts::DTensor flat = ts::reshape(product, {0});
    CHECK(flat.shape() == ts::Shape{0});
    check_layout(flat, dense([] { return ts::zeros({0}); }));
  }
  SUBCASE("mesh [2], [0,2] S(0) -> [2,0] is an empty [2,0]") {
    ts::LocalMode mode(2);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
    const ts::DTensor d = ts::distribute_tensor(distinct({0, 2}), mesh, {ts::Shard(0)});
    const ts::DTensor r = ts::reshape(d, {2, 0});
    CHECK(r.shape() == ts::Shape{2, 0});
    check_layout(r, dense([] { return ts::zeros({2, 0}); }));
    CHECK(ts::view(d, {2, 0, 5}).shape() == ts::Shape{2, 0, 5});
    CHECK_THROWS_WITH_AS(ts::reshape(d, {-1, 0}), doctest::Contains("the -1 could be any size"), ts::Error);
  }
}

TEST_CASE("regression: views that are local on every rank are allowed") {
  SUBCASE("mesh [2], [4,2] S(0) viewed as [2,4]: rank r holds row r, no communication") {
    ts::LocalMode mode(2);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
    const ts::Tensor x = distinct({4, 2});
    const ts::DTensor d = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
    ts::CommCounter counter;
    const ts::DTensor v = ts::view(d, {2, 4});
    CHECK(counter.calls() == 0);
    CHECK(v.placements() == ts::Placements{ts::Shard(0)});
    check_layout(v, dense([&] { return x.reshape({2, 4}); }));
    // Merge then split where the blocks do not line up (rows of 3 over 2 ranks of 2 rows) moves
    // data: view gathers the shard first, as PyTorch's view does (view_test.cpp).
    const ts::Tensor y = distinct({4, 3});
    const ts::DTensor gathered = ts::view(ts::distribute_tensor(y, mesh, {ts::Shard(0)}), {3, 4});
    CHECK(gathered.placements() == ts::Placements{ts::Replicate()});
    check_layout(gathered, dense([&] { return y.reshape({3, 4}); }));
    check_layout(ts::reshape(ts::distribute_tensor(y, mesh, {ts::Shard(0)}), {3, 4}), dense([&] {
                   return y.reshape({3, 4});
                 }));
  }
  SUBCASE("mesh [1], [1,3] S(1) viewed as [3,1]") {
    ts::LocalMode mode(1);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {1});
    const ts::Tensor x = distinct({1, 3});
    const ts::DTensor v = ts::view(ts::distribute_tensor(x, mesh, {ts::Shard(1)}), {3, 1});
    CHECK(v.placements() == ts::Placements{ts::Shard(0)});
    check_layout(v, dense([&] { return x.reshape({3, 1}); }));
  }
}

TEST_CASE("regression: a DTensor view of non-contiguous shards is an error, as Tensor::view is") {
  ts::LocalMode mode(2);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  const ts::Tensor x = distinct({4, 6});
  // Rank r holds columns 3r..3r+2 ([4,3]); transposed, [3,4] with strides (1,3), as S(0) of [6,4].
  const ts::DTensor t = ts::transpose(ts::distribute_tensor(x, mesh, {ts::Shard(1)}), 0, 1);
  CHECK(t.placements() == ts::Placements{ts::Shard(0)});
  CHECK_THROWS_AS(dense([&] { return x.t().view({24}); }), ts::Error);
  CHECK_THROWS_WITH_AS(ts::view(t, {24}), doctest::Contains("without a copy"), ts::Error);
  check_layout(ts::reshape(t, {24}), dense([&] { return x.t().reshape({24}); }));
}

TEST_CASE("regression: matmul where a rank's shard of the contracted dim is empty") {
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ts::Tensor a = distinct({1, 1, 2}), b = distinct({2, 1});
  // b's 2 rows over 3 ranks are 1,1,0: rank 2 multiplies [1,1,0] by [0,1], which is zeros.
  check_layout(ts::matmul(ts::distribute_tensor(a, mesh, {ts::Replicate()}),
                          ts::distribute_tensor(b, mesh, {ts::Shard(0)})),
               dense([&] { return ts::matmul(a, b); }), 1e-6);
  check_layout(ts::matmul(ts::distribute_tensor(a, mesh, {ts::Shard(2)}),
                          ts::distribute_tensor(b, mesh, {ts::Shard(0)})),
               dense([&] { return ts::matmul(a, b); }), 1e-6);
}

TEST_CASE("regression: size(d) of a 0-d DTensor is an error, not a read past its empty shape") {
  ts::LocalMode mode(2);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  const ts::DTensor scalar =
      ts::distribute_tensor(dense([] { return ts::sum(distinct({3})); }), mesh, {ts::Replicate()});
  REQUIRE(scalar.dim() == 0);
  CHECK_THROWS_WITH_AS(scalar.size(0), doctest::Contains("cannot take dim 0 of a 0-d DTensor"), ts::Error);
  CHECK_THROWS_WITH_AS(scalar.size(-1), doctest::Contains("cannot take dim -1 of a 0-d DTensor"), ts::Error);
}
