// The transformer building blocks on DTensors: every result equals the same op on the full tensor,
// over meshes of 3 and 7 ranks and a 2-d mesh, with uneven shards; the placements follow the rules
// of dtensor_ops.hpp, and the sequence-parallel norms move nothing.
#include <doctest/doctest.h>

#include <functional>
#include <tessera/tessera.hpp>

#include "simulated_world.hpp"

namespace ts = tessera;

using dtensor_test::check_close;
using dtensor_test::World;

TEST_CASE("norms on a Shard(seq) input: Shard(seq) output, no collective, equal to the dense op") {
  for (int n : {3, 7}) {
    CAPTURE(n);
    World world(n, 7);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    // 10 positions over 3 or 7 ranks: uneven shards (10 is no multiple of either; with 7 some are empty).
    const ts::Tensor x = world.randn({2, 10, 8}), w = world.randn({8}), b = world.randn({8});
    const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(1)});
    const ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate()});
    const ts::DTensor db = ts::distribute_tensor(b, mesh, {ts::Replicate()});
    if (n == 7) CHECK(dx.to_local().shard(6).size(1) == 0);  // an empty shard normalises to nothing
    ts::CommCounter counter;
    const ts::DTensor r = ts::rms_norm(dx, {8}, dw, 1e-5);
    const ts::DTensor l = ts::layer_norm(dx, {8}, dw, db);
    const ts::DTensor plain = ts::layer_norm(dx, {8});
    CHECK(counter.calls() == 0);
    CHECK(counter.implicit_redistributions().empty());
    CHECK(r.placements() == ts::Placements{ts::Shard(1)});
    CHECK(l.placements() == ts::Placements{ts::Shard(1)});
    check_close(r, ts::rms_norm(x, {8}, w, 1e-5));
    check_close(l, ts::layer_norm(x, {8}, w, b));
    check_close(plain, ts::layer_norm(x, {8}));
  }
}

TEST_CASE(
    "norms on a 2-d mesh: Shard(batch) and Shard(seq) both stay, a sharded normalised dim is gathered") {
  World world(6, 7);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 3}, {"dp", "sp"});
  const ts::Tensor x = world.randn({3, 5, 4}), w = world.randn({4});
  const ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Replicate()});
  {
    const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(1)});
    ts::CommCounter counter;
    const ts::DTensor y = ts::rms_norm(dx, {4}, dw);
    CHECK(counter.calls() == 0);
    CHECK(y.placements() == ts::Placements{ts::Shard(0), ts::Shard(1)});
    check_close(y, ts::rms_norm(x, {4}, w));
  }
  // Sharding a normalised dim: the op redistributes first, and still computes the right thing.
  const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(2), ts::Shard(1)});
  const ts::DTensor y = ts::layer_norm(dx, {5, 4});
  for (const ts::Placement& p : y.placements()) CHECK(!(p.is_shard(1) || p.is_shard(2)));
  check_close(y, ts::layer_norm(x, {5, 4}));
  // A sharded weight is replicated first.
  const ts::DTensor sharded_w = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(0)});
  check_close(ts::rms_norm(ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(1)}), {4}, sharded_w),
              ts::rms_norm(x, {4}, w));
}

TEST_CASE("element-wise ops keep shards without communication and reduce a Partial first") {
  for (int n : {3, 7}) {
    CAPTURE(n);
    World world(n, 7);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    const ts::Tensor x = world.randn({9, 4});
    const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
    const std::vector<std::pair<std::function<ts::DTensor(const ts::DTensor&)>,
                                std::function<ts::Tensor(const ts::Tensor&)>>>
        ops = {
            {[](const ts::DTensor& t) { return ts::silu(t); },
             [](const ts::Tensor& t) { return ts::silu(t); }},
            {[](const ts::DTensor& t) { return ts::gelu(t, "tanh"); },
             [](const ts::Tensor& t) { return ts::gelu(t, "tanh"); }},
            {[](const ts::DTensor& t) { return ts::sin(t); }, [](const ts::Tensor& t) { return ts::sin(t); }},
            {[](const ts::DTensor& t) { return ts::cos(t); }, [](const ts::Tensor& t) { return ts::cos(t); }},
            {[](const ts::DTensor& t) { return ts::rsqrt(ts::abs(t) + 0.5); },
             [](const ts::Tensor& t) { return ts::rsqrt(ts::abs(t) + 0.5); }},
            {[](const ts::DTensor& t) { return ts::clamp(t, -0.5, 0.75); },
             [](const ts::Tensor& t) { return ts::clamp(t, -0.5, 0.75); }},
        };
    for (const auto& [dop, op] : ops) {
      ts::CommCounter counter;
      const ts::DTensor y = dop(dx);
      CHECK(counter.calls() == 0);
      CHECK(y.placements() == ts::Placements{ts::Shard(0)});
      check_close(y, op(x));
    }
    CHECK_THROWS_WITH_AS(ts::gelu(dx, "erf"),
                         doctest::Contains("approximate is 'erf', expected 'none' or 'tanh'"), ts::Error);
    CHECK_THROWS_WITH_AS(ts::clamp(dx, std::nullopt, std::nullopt),
                         doctest::Contains("at least one of lo and hi"), ts::Error);
    // Partial terms: rank r holds x * (r + 1) / (n (n + 1) / 2), so the pending sum is x.
    ts::RankMap<ts::Tensor> terms;
    for (int r = 0; r < n; ++r) terms.set(r, x * (2.0 * (r + 1) / (n * (n + 1))));
    const ts::DTensor partial =
        ts::DTensor::from_local(ts::local_tensor(std::move(terms)), mesh, {ts::Partial()});
    const ts::DTensor s = ts::sin(partial);
    CHECK(!s.placements()[0].is_partial());
    check_close(s, ts::sin(x));
  }
}

TEST_CASE("where and masked_fill shard as broadcasting binary ops") {
  World world(3, 7);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ts::Tensor a = world.randn({7, 5}), b = world.randn({5});
  const ts::Tensor cond = ts::gt(world.randn({7, 5}), 0.0);
  {
    ts::CommCounter counter;
    const ts::DTensor y = ts::where(ts::distribute_tensor(cond, mesh, {ts::Shard(0)}),
                                    ts::distribute_tensor(a, mesh, {ts::Shard(0)}),
                                    ts::distribute_tensor(b, mesh, {ts::Replicate()}));
    CHECK(counter.calls() == 0);
    CHECK(y.placements() == ts::Placements{ts::Shard(0)});
    check_close(y, ts::where(cond, a, b));
  }
  // Mismatched shards redistribute and still give the dense answer.
  check_close(ts::where(ts::distribute_tensor(cond, mesh, {ts::Shard(1)}),
                        ts::distribute_tensor(a, mesh, {ts::Shard(0)}),
                        ts::distribute_tensor(b, mesh, {ts::Shard(0)})),
              ts::where(cond, a, b));
  check_close(ts::where(ts::distribute_tensor(cond, mesh, {ts::Shard(0)}),
                        ts::distribute_tensor(a, mesh, {ts::Shard(0)}), 0.0),
              ts::where(cond, a, 0.0));
  check_close(ts::where(ts::distribute_tensor(cond, mesh, {ts::Shard(1)}), -1.0,
                        ts::distribute_tensor(a, mesh, {ts::Replicate()})),
              ts::where(cond, -1.0, a));
  // A causal mask over scores [heads, s, s] sharded by heads.
  const ts::Tensor scores = world.randn({6, 4, 4});
  ts::Tensor causal;
  {
    auto off = world.mode.disable();
    causal = ts::triu(ts::ones({4, 4}, ts::kBool), 1);
  }
  ts::CommCounter counter;
  const ts::DTensor masked = ts::masked_fill(ts::distribute_tensor(scores, mesh, {ts::Shard(0)}),
                                             ts::distribute_tensor(causal, mesh, {ts::Replicate()}), -1e9);
  CHECK(counter.calls() == 0);
  CHECK(masked.placements() == ts::Placements{ts::Shard(0)});
  check_close(masked, ts::masked_fill(scores, causal, -1e9));
  // The mask may not grow the tensor.
  CHECK_THROWS_WITH_AS(
      ts::masked_fill(ts::distribute_tensor(causal.to(ts::kFloat32), mesh, {ts::Replicate()}),
                      ts::distribute_tensor(ts::gt(scores, 0.0), mesh, {ts::Shard(0)}), 1.0),
      doctest::Contains("mask's shape [6, 4, 4] does not broadcast to the tensor's shape [4, 4]"), ts::Error);
}

TEST_CASE("tril, triu and cumsum keep shards of the other dims and a Partial sum") {
  for (int n : {3, 7}) {
    CAPTURE(n);
    World world(n, 7);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    const ts::Tensor x = world.randn({8, 5, 6});
    const ts::DTensor batch = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
    ts::CommCounter counter;
    const ts::DTensor lo = ts::tril(batch, -1);
    const ts::DTensor up = ts::triu(batch, 2);
    const ts::DTensor cs = ts::cumsum(batch, 2);
    CHECK(counter.calls() == 0);
    CHECK(lo.placements() == ts::Placements{ts::Shard(0)});
    CHECK(cs.placements() == ts::Placements{ts::Shard(0)});
    check_close(lo, ts::tril(x, -1));
    check_close(up, ts::triu(x, 2));
    check_close(cs, ts::cumsum(x, 2));
    // Sharding the matrix dims or the summed dim: replicated first, same answer.
    const ts::DTensor rows = ts::distribute_tensor(x, mesh, {ts::Shard(1)});
    check_close(ts::tril(rows), ts::tril(x));
    check_close(ts::triu(ts::distribute_tensor(x, mesh, {ts::Shard(2)}), -2), ts::triu(x, -2));
    check_close(ts::cumsum(rows, 1), ts::cumsum(x, 1));
    const ts::DTensor rows_cs = ts::cumsum(rows, 2);
    CHECK(rows_cs.placements() == ts::Placements{ts::Shard(1)});
    check_close(rows_cs, ts::cumsum(x, 2));
    // Linear: a Partial sum stays pending.
    ts::RankMap<ts::Tensor> terms;
    for (int r = 0; r < n; ++r) terms.set(r, x * (2.0 * (r + 1) / (n * (n + 1))));
    const ts::DTensor partial =
        ts::DTensor::from_local(ts::local_tensor(std::move(terms)), mesh, {ts::Partial()});
    const ts::DTensor pl = ts::tril(partial);
    CHECK(pl.placements()[0].is_partial());
    check_close(pl, ts::tril(x));
    check_close(ts::cumsum(partial, 0), ts::cumsum(x, 0));
    CHECK_THROWS_WITH_AS(ts::tril(ts::distribute_tensor(x.flatten(), mesh, {ts::Shard(0)})),
                         doctest::Contains("tril: the input has 1 dims (shape [240]), expected at least 2"),
                         ts::Error);
    CHECK_THROWS_WITH_AS(ts::cumsum(batch, 3),
                         doctest::Contains("dim 3 is out of range for a tensor of 3 dims"), ts::Error);
  }
}

TEST_CASE("DTensor transpose and permute methods are the free functions") {
  World world(3, 7);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ts::Tensor x = world.randn({4, 5, 6});
  const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(1)});
  const ts::DTensor t = dx.transpose(1, 2);
  CHECK(t.placements() == ts::Placements{ts::Shard(2)});
  check_close(t, ts::transpose(x, 1, 2));
  const ts::DTensor p = dx.permute({2, 0, 1});
  CHECK(p.placements() == ts::Placements{ts::Shard(2)});
  check_close(p, ts::permute(x, {2, 0, 1}));
}

TEST_CASE("sequence-parallel norms differentiate: input and weight gradients equal the dense op's") {
  World world(3, 7);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::Tensor x = world.randn({2, 7, 4}).to(ts::kFloat64), w = world.randn({4}).to(ts::kFloat64);
  ts::Tensor b = world.randn({4}).to(ts::kFloat64), c = world.randn({2, 7, 4}).to(ts::kFloat64);
  for (bool rms : {true, false}) {
    CAPTURE(rms);
    ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(1)}).set_requires_grad(true);
    ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate()}).set_requires_grad(true);
    ts::DTensor db = ts::distribute_tensor(b, mesh, {ts::Replicate()}).set_requires_grad(true);
    const ts::DTensor dc = ts::distribute_tensor(c, mesh, {ts::Shard(1)});
    const ts::DTensor y = rms ? ts::rms_norm(dx, {4}, dw, 1e-5) : ts::layer_norm(dx, {4}, dw, db);
    ts::sum(y * dc).backward();

    ts::Tensor lx = x.detach().set_requires_grad(true), lw = w.detach().set_requires_grad(true);
    ts::Tensor lb = b.detach().set_requires_grad(true);
    const ts::Tensor ly = rms ? ts::rms_norm(lx, {4}, lw, 1e-5) : ts::layer_norm(lx, {4}, lw, lb);
    ts::sum(ly * c).backward();
    CHECK(dx.grad().placements() == ts::Placements{ts::Shard(1)});
    CHECK(ts::allclose(dx.grad().full_tensor().reconcile(), lx.grad(), 1e-10, 1e-12));
    CHECK(ts::allclose(dw.grad().full_tensor().reconcile(), lw.grad(), 1e-10, 1e-12));
    if (!rms) CHECK(ts::allclose(db.grad().full_tensor().reconcile(), lb.grad(), 1e-10, 1e-12));
  }
}
