// DTensors whose shards live on a backend other than the default ("cpu2", a second instance of the
// CPU backend built for this test) stay there through every redistribution and op (a redistribution once
// allocated its buffers on the default backend).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "layout_oracle.hpp"

namespace ts = tessera;
using layout_oracle::check_layout;
using layout_oracle::values;

namespace {

ts::TensorOptions on_cpu2(ts::DType dtype = ts::kFloat32) { return ts::TensorOptions(dtype).backend("cpu2"); }

void load_cpu2() { ts::load_plugin(TESSERA_CPU2_PLUGIN_FILE); }

// 0, 1, 2, ... in `shape`, on cpu2 (distinct values, so a misplaced block shows).
ts::Tensor counting(const ts::Shape& shape, float start = 0.f) {
  ts::DisabledLocalMode plain;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (ts::arange(n, on_cpu2()) + start).reshape(shape);
}

void check_on_cpu2(const ts::DTensor& t, const char* what) {
  INFO(what);
  for (const auto& [shard_rank, shard] : t.to_local().shards()) {
    const auto rank = shard_rank;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(rank);
    CHECK(shard.backend() == "cpu2");
  }
}

}  // namespace

TEST_CASE("the cpu2 test backend is a second backend") {
  load_cpu2();
  const std::vector<std::string> names = ts::backend_names();
  CHECK(std::find(names.begin(), names.end(), "cpu2") != names.end());
  CHECK(ts::default_backend() == "cpu");
  CHECK(counting({3}).backend() == "cpu2");
}

TEST_CASE("every redistribution of a DTensor on cpu2 stays on cpu2 and matches the layout oracle") {
  load_cpu2();
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu2", {2, 2});
  const ts::Tensor x = counting({5, 3});
  const std::vector<ts::Placement> choices = {ts::Replicate(), ts::Shard(0), ts::Shard(1),
                                              ts::BalancedShard(0)};
  for (const ts::Placement& a0 : choices)
    for (const ts::Placement& a1 : choices) {
      const ts::Placements from = {a0, a1};
      const ts::DTensor source = ts::distribute_tensor(x, mesh, from);
      check_on_cpu2(source, "distribute_tensor");
      check_layout(source, x, 0.0, "distributed " + ts::placements_text(from));
      for (const ts::Placement& b0 : choices)
        for (const ts::Placement& b1 : choices) {
          const ts::Placements to = {b0, b1};
          const std::string what = ts::placements_text(from) + " -> " + ts::placements_text(to);
          const ts::DTensor moved = source.redistribute(to);  // S->R, S->S, R->S, nested S(0),S(0)
          check_on_cpu2(moved, what.c_str());
          check_layout(moved, x, 0.0, what);
        }
    }
}

TEST_CASE("partial DTensors on cpu2 reduce into Replicate, Shard and nested shards on cpu2") {
  load_cpu2();
  ts::LocalMode mode(4);
  const ts::DeviceMesh line = ts::init_device_mesh("cpu2", {4});
  // Rank r holds 0..14 + 100 r; the sum is 4 * (0..14) + 600.
  const ts::Tensor terms = ts::rank_map([](int r) { return counting({5, 3}, 100.f * r); });
  const ts::Tensor sum = counting({5, 3}) * 4.f + 600.f;
  const ts::DTensor p = ts::from_local(terms, line, {ts::Partial()});
  for (const ts::Placements& to : std::vector<ts::Placements>{
           {ts::Replicate()}, {ts::Shard(0)}, {ts::Shard(1)}, {ts::BalancedShard(0)}}) {
    const std::string what = "P(sum) -> " + ts::placements_text(to);
    const ts::DTensor moved = p.redistribute(to);
    check_on_cpu2(moved, what.c_str());
    check_layout(moved, sum, 0.0, what);
  }
  const ts::DeviceMesh square = ts::init_device_mesh("cpu2", {2, 2});
  const ts::DTensor pp = ts::from_local(terms, square, {ts::Partial(), ts::Partial()});
  for (const ts::Placements& to : std::vector<ts::Placements>{
           {ts::Shard(0), ts::Shard(0)}, {ts::Replicate(), ts::Shard(1)}, {ts::Shard(1), ts::Replicate()}}) {
    const std::string what = "P(sum),P(sum) -> " + ts::placements_text(to);
    const ts::DTensor moved = pp.redistribute(to);
    check_on_cpu2(moved, what.c_str());
    check_layout(moved, sum, 0.0, what);
  }
  const ts::DTensor mixed = ts::from_local(ts::rank_map([](int r) {
                                             return counting({r < 2 ? 3 : 2, 3}, 100.f * r);
                                           }),
                                           square, {ts::Shard(0), ts::Partial()}, ts::Shape{5, 3});
  // Rows 0-2 are terms of ranks 0 and 1, rows 3-4 of ranks 2 and 3.
  ts::Tensor expected;
  {
    ts::DisabledLocalMode plain;
    expected = ts::cat({counting({3, 3}) * 2.f + 100.f, counting({2, 3}) * 2.f + 500.f}, 0);
  }
  const ts::DTensor gathered = mixed.redistribute({ts::Replicate(), ts::Shard(0)});
  check_on_cpu2(gathered, "S(0),P(sum) -> R,S(0)");
  check_layout(gathered, expected, 0.0, "S(0),P(sum) -> R,S(0)");
}

TEST_CASE("ops on cpu2 DTensors keep their results on cpu2") {
  load_cpu2();
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu2", {2, 2});
  const ts::Tensor x = counting({6, 4}), w = counting({4, 5}, -7.f);
  ts::Tensor xw, x_plus, x_sum0, x_max0, x_min1, x_mean, x_flat, x_soft;
  {
    ts::DisabledLocalMode plain;
    xw = ts::matmul(x, w);
    x_plus = ts::relu(x - 3.f) + x;
    x_sum0 = ts::sum(x, {0});
    x_max0 = ts::max(x, {0});
    x_min1 = ts::min(x, {1});
    x_mean = ts::mean(x);
    x_flat = x.reshape({24});
    x_soft = ts::softmax(x / 10.f, 1);
  }
  const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(1)});
  const ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(0)});
  struct Case {
    const char* name;
    ts::DTensor result;
    ts::Tensor expected;
  };
  const std::vector<Case> cases = {
      {"matmul", ts::matmul(dx, dw), xw},         {"pointwise", ts::relu(dx - 3.0) + dx, x_plus},
      {"sum", ts::sum(dx, {0}), x_sum0},          {"max", ts::max(dx, {0}), x_max0},
      {"min", ts::min(dx, {1}), x_min1},          {"mean", ts::mean(dx), x_mean},
      {"reshape", ts::reshape(dx, {24}), x_flat}, {"softmax", ts::softmax(dx / 10.0, 1), x_soft},
  };
  for (const Case& c : cases) {
    check_on_cpu2(c.result, c.name);
    const ts::Tensor full = c.result.full_tensor();
    for (const auto& [shard_rank, shard] : full.shards()) {
      const auto rank = shard_rank;  // named again: clang 14 cannot capture a structured binding
      CAPTURE(c.name);
      CAPTURE(rank);
      CHECK(shard.backend() == "cpu2");
      CHECK(layout_oracle::close(values(shard), values(c.expected), 1e-5));
    }
  }
}
