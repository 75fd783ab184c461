// Ops on DTensors: output placements per rule, results against the same op on
// the unsharded tensors, implicit redistribution, and the errors.
#include <doctest/doctest.h>

#include <thread>

#include <tessera/tessera.hpp>

#include "simulated_world.hpp"

namespace ts = tessera;

using dtensor_test::check_close;
using dtensor_test::World;

TEST_CASE("golden: relu(x @ w + b) with x S(0), w R, b R on 4 ranks") {
  World world(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
  ts::Tensor x = world.randn({16, 8}), w = world.randn({8, 4}), b = world.randn({4});
  ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate()});
  ts::DTensor db = ts::distribute_tensor(b, mesh, {ts::Replicate()});
  ts::DTensor y = ts::relu(ts::matmul(dx, dw) + db);
  CHECK(y.placements() == ts::Placements{ts::Shard(0)});
  check_close(y, ts::relu(ts::matmul(x, w) + b));
}

TEST_CASE("golden: mesh (4,2) [S(0),R] @ [R,S(1)] equals x @ w") {
  World world(8);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  ts::Tensor x = world.randn({16, 8}), w = world.randn({8, 12});
  ts::DTensor y = ts::matmul(ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()}),
                             ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(1)}));
  CHECK(y.placements() == ts::Placements{ts::Shard(0), ts::Shard(1)});
  check_close(y, ts::matmul(x, w));
}

TEST_CASE("matmul rules: S(1) x S(0) gives P(sum) without communication") {
  World world(3);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::Tensor a = world.randn({5, 7}), b = world.randn({7, 2});
  ts::DTensor p = ts::matmul(ts::distribute_tensor(a, mesh, {ts::Shard(1)}),
                             ts::distribute_tensor(b, mesh, {ts::Shard(0)}));
  CHECK(p.placements() == ts::Placements{ts::Partial()});
  check_close(p, ts::matmul(a, b));
  // R x S(1) -> S(1); mismatched inputs redistribute and still compute the right thing.
  ts::DTensor s1 = ts::matmul(ts::distribute_tensor(a, mesh, {ts::Replicate()}),
                              ts::distribute_tensor(b, mesh, {ts::Shard(1)}));
  CHECK(s1.placements() == ts::Placements{ts::Shard(1)});
  check_close(s1, ts::matmul(a, b));
  ts::DTensor odd = ts::matmul(ts::distribute_tensor(a, mesh, {ts::Shard(0)}),
                               ts::distribute_tensor(b, mesh, {ts::Shard(1)}));
  check_close(odd, ts::matmul(a, b));
  // bmm keeps a sharded batch dim.
  ts::Tensor ba = world.randn({6, 3, 4}), bb = world.randn({6, 4, 5});
  ts::DTensor batched = ts::bmm(ts::distribute_tensor(ba, mesh, {ts::Shard(0)}),
                                ts::distribute_tensor(bb, mesh, {ts::Shard(0)}));
  CHECK(batched.placements() == ts::Placements{ts::Shard(0)});
  check_close(batched, ts::bmm(ba, bb));
}

TEST_CASE("pointwise rules: broadcasting, partial terms, scalars") {
  World world(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
  ts::Tensor a = world.randn({6, 3}), b = world.randn({3}), c = world.randn({6, 3});
  ts::DTensor da = ts::distribute_tensor(a, mesh, {ts::Shard(0)});
  ts::DTensor db = ts::distribute_tensor(b, mesh, {ts::Replicate()});
  ts::DTensor sum = da * db - da;
  CHECK(sum.placements() == ts::Placements{ts::Shard(0)});
  check_close(sum, a * b - a);
  // P(sum) + P(sum) stays P(sum); P(sum) * R stays P(sum); P + R splits R into terms.
  ts::Tensor terms = ts::rank_map([&](int r) { return c * float(r + 1); });  // the sum is 10 c
  ts::DTensor p = ts::from_local(terms, mesh, {ts::Partial()});
  ts::DTensor pp = p + p;
  CHECK(pp.placements() == ts::Placements{ts::Partial()});
  check_close(pp, c * 20.f, 1e-4);
  ts::DTensor pr = p * ts::distribute_tensor(c, mesh, {ts::Replicate()});
  CHECK(pr.placements() == ts::Placements{ts::Partial()});
  check_close(pr, c * c * 10.f, 1e-4);
  ts::DTensor p_plus_r = p + ts::distribute_tensor(c, mesh, {ts::Replicate()});
  CHECK(p_plus_r.placements() == ts::Placements{ts::Partial()});
  check_close(p_plus_r, c * 11.f, 1e-4);
  // A scalar added to a partial reduces it first (not scalar * 4, PyTorch bug #163193).
  ts::DTensor plus_one = p + 1.0;
  CHECK(plus_one.placements() == ts::Placements{ts::Replicate()});
  check_close(plus_one, c * 10.f + 1.f, 1e-4);
  ts::DTensor scaled = p * 2.0;
  CHECK(scaled.placements() == ts::Placements{ts::Partial()});
  check_close(scaled, c * 20.f, 1e-4);
  // relu of a partial must reduce first.
  ts::DTensor r = ts::relu(p);
  CHECK(r.placements() == ts::Placements{ts::Replicate()});
  check_close(r, ts::relu(c * 10.f), 1e-4);
  check_close(-p, c * -10.f, 1e-4);
}

TEST_CASE("unary ops and softmax keep shards, softmax over a sharded dim gathers it") {
  World world(3);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::Tensor x = world.randn({7, 5});
  ts::DTensor rows = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  for (auto [op_name, f, g] : std::vector<
           std::tuple<const char*, ts::DTensor (*)(const ts::DTensor&), ts::Tensor (*)(const ts::Tensor&)>>{
           {"gelu", ts::gelu, ts::gelu},
           {"tanh", ts::tanh, ts::tanh},
           {"exp", ts::exp, ts::exp},
           {"sigmoid", ts::sigmoid, ts::sigmoid},
           {"abs", ts::abs, ts::abs}}) {
    const char* name = op_name;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    ts::DTensor y = f(rows);
    CHECK(y.placements() == ts::Placements{ts::Shard(0)});
    check_close(y, g(x));
  }
  ts::DTensor sm = ts::softmax(rows, 1);
  CHECK(sm.placements() == ts::Placements{ts::Shard(0)});
  check_close(sm, ts::softmax(x, 1));
  ts::DTensor across = ts::softmax(rows, 0);
  CHECK(across.placements() == ts::Placements{ts::Replicate()});
  check_close(across, ts::softmax(x, 0));
}

TEST_CASE("reductions: sharded dims become partial, kept dims keep their shard") {
  World world(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
  ts::Tensor x = world.randn({8, 6});
  ts::DTensor rows = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  ts::DTensor s0 = ts::sum(rows, {0});
  CHECK(s0.placements() == ts::Placements{ts::Partial("sum")});
  check_close(s0, ts::sum(x, {0}), 1e-4);
  ts::DTensor s1 = ts::sum(rows, {1}, true);
  CHECK(s1.placements() == ts::Placements{ts::Shard(0)});
  check_close(s1, ts::sum(x, {1}, true), 1e-4);
  ts::DTensor m = ts::max(rows, {0});
  CHECK(m.placements() == ts::Placements{ts::Partial("max")});
  check_close(m, ts::max(x, {0}));
  check_close(ts::min(rows), ts::min(x));
  check_close(ts::prod(ts::distribute_tensor(ts::full({8}, 1.5f), mesh, {ts::Shard(0)})),
              ts::prod(ts::full({8}, 1.5f)), 1e-3);
  // mean: even shards -> P(avg); uneven shards replicate first (PyTorch bug #162692).
  ts::DTensor even = ts::mean(rows, {0});
  CHECK(even.placements() == ts::Placements{ts::Partial("avg")});
  check_close(even, ts::mean(x, {0}));
  ts::Tensor y = world.randn({10, 2});
  ts::DTensor uneven = ts::mean(ts::distribute_tensor(y, mesh, {ts::Shard(0)}), {0});
  CHECK(uneven.placements() == ts::Placements{ts::Replicate()});
  check_close(uneven, ts::mean(y, {0}));
}

TEST_CASE("transpose, permute, reshape and view remap shard dims") {
  World world(2);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::Tensor x = world.randn({4, 3, 6});
  ts::DTensor d = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  ts::DTensor t = ts::transpose(d, 0, 2);
  CHECK(t.placements() == ts::Placements{ts::Shard(2)});
  check_close(t, x.transpose(0, 2));
  ts::DTensor p = ts::permute(d, {1, 0, 2});
  CHECK(p.placements() == ts::Placements{ts::Shard(1)});
  check_close(p, x.permute({1, 0, 2}));
  ts::DTensor merged = ts::reshape(d, {12, 6});  // leading dim of an even merge
  CHECK(merged.placements() == ts::Placements{ts::Shard(0)});
  check_close(merged, x.reshape({12, 6}));
  ts::DTensor kept = ts::view(d, {4, 18});
  CHECK(kept.placements() == ts::Placements{ts::Shard(0)});
  check_close(kept, x.reshape({4, 18}));
  ts::DTensor inner = ts::distribute_tensor(x, mesh, {ts::Shard(2)});
  // A shard the view cannot follow is gathered first, as PyTorch's view does (view_test.cpp).
  ts::DTensor gathered = ts::view(inner, {4, 18});
  CHECK(gathered.placements() == ts::Placements{ts::Replicate()});
  check_close(gathered, x.reshape({4, 18}));
  ts::DTensor moved = ts::reshape(inner, {4, 18});
  CHECK(moved.placements() == ts::Placements{ts::Replicate()});
  check_close(moved, x.reshape({4, 18}));
}

TEST_CASE("mixing DTensors with plain tensors") {
  World world(2);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::Tensor x = world.randn({4, 3});
  ts::DTensor d = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  ts::Tensor one;
  ts::Tensor many;
  {
    auto off = world.mode.disable();
    one = ts::tensor({2.f});
    many = ts::ones({4, 3});
  }
  check_close(d * one, x * 2.f);
  CHECK_THROWS_WITH_AS(
      d + many,
      doctest::Contains("a plain tensor of 12 elements (shape [4, 3]); distribute the tensor first"),
      ts::Error);
  CHECK_THROWS_WITH_AS(many - d, doctest::Contains("sub: got a DTensor and a plain tensor of 12 elements"),
                       ts::Error);
  ts::set_implicit_replication(true);
  check_close(d + many, x + 1.f);
  ts::set_implicit_replication(false);
  {
    const ts::ImplicitReplication on;  // PyTorch: with implicit_replication():
    check_close(many * d, x);
    // The setting is this thread's: another thread (another program's world) does not see it.
    bool other_thread_sees = true;
    std::thread([&] { other_thread_sees = ts::implicit_replication(); }).join();
    CHECK_FALSE(other_thread_sees);
  }
  CHECK_FALSE(ts::implicit_replication());
}

TEST_CASE("op errors name the op and the inputs") {
  World world(4);
  ts::DeviceMesh a = ts::init_device_mesh("cpu", {4});
  ts::DeviceMesh b = ts::init_device_mesh("cpu", {2, 2});
  ts::Tensor x = world.randn({4, 4});
  CHECK_THROWS_WITH_AS(ts::distribute_tensor(x, a, {ts::Shard(0)}) +
                           ts::distribute_tensor(x, b, {ts::Shard(0), ts::Replicate()}),
                       doctest::Contains("add: inputs live on different meshes"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::matmul(ts::distribute_tensor(x, a, {ts::Shard(0)}),
                                  ts::distribute_tensor(world.randn({3, 2}), a, {ts::Replicate()})),
                       doctest::Contains("inner dimensions do not match"), ts::Error);
}

TEST_CASE("reductions on uneven shards and 2-d meshes match the dense op") {
  World world(6);
  ts::DeviceMesh line = ts::init_device_mesh("cpu", {6});
  ts::DeviceMesh grid = ts::init_device_mesh("cpu", {3, 2});
  ts::Tensor x = world.randn({7, 5});  // 7 rows over 6: 2,2,2,1,0,0; over 3 then 2: nested and uneven
  for (const auto& [mesh, layout] :
       std::vector<std::pair<ts::DeviceMesh, ts::Placements>>{{line, {ts::Shard(0)}},
                                                              {line, {ts::BalancedShard(1)}},
                                                              {grid, {ts::Shard(0), ts::Shard(1)}},
                                                              {grid, {ts::Shard(0), ts::Shard(0)}},
                                                              {grid, {ts::BalancedShard(1), ts::Shard(0)}},
                                                              {grid, {ts::Replicate(), ts::Shard(1)}}}) {
    const ts::Placements& placements = layout;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(ts::placements_text(placements));
    const ts::DTensor d = ts::distribute_tensor(x, mesh, placements);
    for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{0}, {1}, {}, {0, 1}}) {
      CAPTURE(dims.size());
      check_close(ts::sum(d, dims), ts::sum(x, dims), 1e-4);
      check_close(ts::mean(d, dims, true), ts::mean(x, dims, true), 1e-5);
      check_close(ts::max(d, dims), ts::max(x, dims));
      check_close(ts::min(d, dims, true), ts::min(x, dims, true));
    }
  }
}

TEST_CASE("reshape on 2-d meshes, nested and uneven shards") {
  World world(6);
  ts::DeviceMesh grid = ts::init_device_mesh("cpu", {3, 2});
  ts::Tensor x = world.randn({6, 4, 5});
  struct Case {
    ts::Placements placements;
    ts::Shape target;
  };
  for (const Case& c : std::vector<Case>{{{ts::Shard(0), ts::Shard(1)}, {6, 20}},
                                         {{ts::Shard(0), ts::Shard(0)}, {120}},
                                         {{ts::Shard(0), ts::Shard(0)}, {2, 3, 20}},
                                         {{ts::Shard(2), ts::Shard(0)}, {24, 5}},
                                         {{ts::BalancedShard(1), ts::Replicate()}, {6, 2, 2, 5}},
                                         {{ts::Shard(1), ts::Shard(2)}, {3, 2, 20}},
                                         {{ts::Replicate(), ts::Shard(2)}, {5, 24}}}) {
    CAPTURE(ts::placements_text(c.placements));
    const ts::DTensor d = ts::distribute_tensor(x, grid, c.placements);
    check_close(ts::reshape(d, c.target), x.reshape(c.target), 0.0);
  }
  // [6,4,5] S(0),S(1) -> [6,20]: dim 0 survives, dim 1 leads a merge of 4 (2 per rank) with 5.
  const ts::DTensor kept = ts::reshape(ts::distribute_tensor(x, grid, {ts::Shard(0), ts::Shard(1)}), {6, 20});
  CHECK(kept.placements() == ts::Placements{ts::Shard(0), ts::Shard(1)});
}
