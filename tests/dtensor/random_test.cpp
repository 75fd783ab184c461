// Random DTensors and dropout on DTensors: every placement (Replicate, even and uneven shards, 2-d
// meshes, Partial inputs) holds the values of the same op on the full tensor with the same
// generator state, and the generator advances by the global element count.
#include "transformer_test_support.hpp"

namespace ts = tessera;
using tt::check_close;
using tt::global;
using tt::pattern;

namespace {

struct Layout {
  std::vector<int64_t> mesh;
  ts::Placements placements;
};

const std::vector<Layout> kLayouts = {
    {{1}, {ts::Shard(0)}},
    {{2}, {ts::Replicate()}},
    {{2}, {ts::Shard(0)}},
    {{3}, {ts::Shard(0)}},
    {{3}, {ts::Shard(1)}},
    {{4}, {ts::Shard(1)}},
    {{2, 2}, {ts::Shard(0), ts::Shard(1)}},
    {{2, 3}, {ts::Replicate(), ts::Shard(0)}},
    {{2, 2}, {ts::Shard(1), ts::Shard(1)}},
};

}  // namespace

TEST_CASE("rand and randn on DTensors equal the dense draw for every placement") {
  for (const Layout& layout : kLayouts) {
    CAPTURE(ts::placements_text(layout.placements));
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", layout.mesh);
    ts::Generator g(77), reference(77);
    g.advance(5);
    reference.advance(5);
    const ts::DTensor u = ts::rand({7, 5}, mesh, layout.placements, g, ts::kFloat64);
    const ts::DTensor n = ts::randn({7, 5}, mesh, layout.placements, g, ts::kFloat64);
    CHECK(u.placements() == layout.placements);
    CHECK(g.offset() == 5 + 2 * 35);  // the global count, once
    const ts::Tensor expected_u = ts::rand({7, 5}, reference, ts::kFloat64);
    const ts::Tensor expected_n = ts::randn({7, 5}, reference, ts::kFloat64);
    check_close(global(u), expected_u, 0.0);
    check_close(global(n), expected_n, 0.0);
  }
}

TEST_CASE(
    "rand on DTensors draws from the default generator, and inside a LocalMode from the ranks' alike ones") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::manual_seed(11);
  const ts::DTensor u = ts::rand({5, 4}, mesh, {ts::Shard(0)});
  ts::manual_seed(11);
  check_close(global(u), ts::rand({5, 4}), 0.0);
  {
    ts::LocalMode mode(3);
    ts::manual_seed(4);
    const ts::DTensor v = ts::rand({5, 4}, mesh, {ts::Shard(1)});
    CHECK(mode.generator(0).offset() == 20);
    CHECK(mode.generator(2).offset() == 20);
    ts::Generator reference(4);
    check_close(global(v), ts::rand({5, 4}, reference).to(ts::kFloat32), 0.0);
    mode.manual_seed(ts::SymInt(ts::LocalInt({{0, 1}, {1, 2}, {2, 3}})));
    CHECK_THROWS_WITH_AS(ts::rand({5, 4}, mesh, {ts::Shard(1)}),
                         doctest::Contains("expected one generator state"), ts::Error);
  }
  CHECK_THROWS_WITH_AS(ts::rand({5, 4}, mesh, {ts::Partial()}), doctest::Contains("P(sum) is not allowed"),
                       ts::Error);
}

TEST_CASE(
    "dropout on DTensors equals the dense dropout for every placement, Partial included, with gradients") {
  const ts::Tensor x0 = pattern({7, 5}, 1.0, 0.4), c = pattern({7, 5}, 0.6, 0.2);
  ts::Generator dense_gen(31);
  ts::Tensor xd = x0.clone().requires_grad_();
  const ts::Tensor expected = ts::dropout(xd, 0.35, true, dense_gen);
  ts::sum(expected * c).backward();
  for (const Layout& layout : kLayouts) {
    CAPTURE(ts::placements_text(layout.placements));
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", layout.mesh);
    ts::Generator g(31);
    ts::DTensor x = ts::distribute_tensor(x0, mesh, layout.placements).set_requires_grad(true);
    const ts::DTensor out = ts::dropout(x, 0.35, true, g);
    CHECK(g.offset() == 35);
    CHECK(out.placements() == layout.placements);
    check_close(global(out), expected.detach());
    ts::sum(ts::mul(out, ts::distribute_tensor(c, mesh, layout.placements))).backward();
    check_close(global(x.grad()), xd.grad());
  }
  // A Partial input: every term scaled by the same mask, so the sum is the dropout of the sum.
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::RankMap<ts::Tensor> halves;
  halves.set(0, x0 * 0.25);
  halves.set(1, x0 * 0.75);
  const ts::DTensor partial = ts::from_local(ts::local_tensor(std::move(halves)), mesh, {ts::Partial()});
  ts::Generator g(31);
  const ts::DTensor dropped = ts::dropout(partial, 0.35, true, g);
  CHECK(dropped.placements() == ts::Placements{ts::Partial()});
  check_close(global(dropped), expected.detach());
}

TEST_CASE("dropout on DTensors: eval, p = 0 and p = 1, and errors") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  const ts::DTensor x = ts::distribute_tensor(pattern({4, 3}, 1.0, 0.4), mesh, {ts::Shard(0)});
  ts::Generator g(3);
  CHECK(ts::dropout(x, 0.5, false, g).to_local().shard(0).data_ptr() == x.to_local().shard(0).data_ptr());
  CHECK(ts::dropout(x, 0.0, true, g).to_local().shard(1).data_ptr() == x.to_local().shard(1).data_ptr());
  CHECK(g.offset() == 0);
  check_close(global(ts::dropout(x, 1.0, true, g)), ts::zeros({4, 3}, ts::kFloat64));
  CHECK_THROWS_WITH_AS(ts::dropout(x, 1.2, true), doctest::Contains("p is 1.2"), ts::Error);
}
