// gather, scatter_add, index_select and one_hot on DTensors: values and gradients equal the dense
// ops' on 1 to 4 ranks; shards off the indexed dim stay, without communication.
#include "transformer_test_support.hpp"

namespace ts = tessera;
using tt::check_close;
using tt::global;
using tt::pattern;

TEST_CASE("gather and index_select on DTensors sharded off the indexed dim") {
  const ts::Tensor x0 = pattern({5, 4}, 1.0, 0.3), c = pattern({5, 3}, 0.7, 0.1);
  const ts::Tensor index = ts::tensor({{3L, 0L, 3L}, {1L, 1L, 2L}, {0L, 3L, 2L}, {2L, 2L, 2L}, {1L, 0L, 3L}});
  ts::Tensor xd = x0.clone().requires_grad_();
  const ts::Tensor expected = ts::gather(xd, 1, index);
  ts::sum(expected * c).backward();
  const ts::Tensor rows = ts::tensor({4L, 0L, 4L});
  const ts::Tensor selected = ts::index_select(x0, 0, rows);
  for (int n : {1, 2, 3, 4}) {
    CAPTURE(n);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    ts::DTensor x = ts::distribute_tensor(x0, mesh, {ts::Shard(0)}).set_requires_grad(true);
    ts::CommCounter counter;
    const ts::DTensor out = ts::gather(x, 1, ts::distribute_tensor(index, mesh, {ts::Shard(0)}));
    CHECK(counter.calls() == 0);
    CHECK(out.placements() == ts::Placements{ts::Shard(0)});
    check_close(global(out), expected.detach());
    ts::sum(ts::mul(out, ts::distribute_tensor(c, mesh, {ts::Shard(0)}))).backward();
    check_close(global(x.grad()), xd.grad());

    const ts::DTensor by_columns = ts::distribute_tensor(x0, mesh, {ts::Shard(1)});
    const ts::DTensor picked = ts::index_select(by_columns, 0, rows);
    CHECK(picked.placements() == ts::Placements{ts::Shard(1)});
    check_close(global(picked), selected);
    // The indexed dim sharded: replicated first, still the dense values.
    check_close(global(ts::index_select(x, 0, rows)), selected);
    check_close(global(ts::gather(by_columns, 1, index)), expected.detach());
  }
}

TEST_CASE("scatter_add and one_hot on DTensors") {
  const ts::Tensor x0 = pattern({5, 4}, 1.0, 0.3), src0 = pattern({5, 2}, 0.5, 0.2),
                   c = pattern({5, 4}, 0.7, 0.1);
  const ts::Tensor index = ts::tensor({{3L, 3L}, {1L, 0L}, {0L, 0L}, {2L, 1L}, {3L, 2L}});
  ts::Tensor xd = x0.clone().requires_grad_(), sd = src0.clone().requires_grad_();
  const ts::Tensor expected = ts::scatter_add(xd, 1, index, sd);
  ts::sum(expected * c).backward();
  const ts::Tensor labels = ts::tensor({2L, 0L, 5L, 1L});
  const ts::Tensor hot = ts::one_hot(labels);
  for (int n : {1, 2, 3, 4}) {
    CAPTURE(n);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    ts::DTensor x = ts::distribute_tensor(x0, mesh, {ts::Shard(0)}).set_requires_grad(true);
    ts::DTensor src = ts::distribute_tensor(src0, mesh, {ts::Shard(0)}).set_requires_grad(true);
    ts::CommCounter counter;
    const ts::DTensor out = ts::scatter_add(x, 1, ts::distribute_tensor(index, mesh, {ts::Shard(0)}), src);
    CHECK(counter.calls() == 0);
    CHECK(out.placements() == ts::Placements{ts::Shard(0)});
    check_close(global(out), expected.detach());
    ts::sum(ts::mul(out, ts::distribute_tensor(c, mesh, {ts::Shard(0)}))).backward();
    check_close(global(x.grad()), xd.grad());
    check_close(global(src.grad()), sd.grad());

    const ts::DTensor dl = ts::distribute_tensor(labels, mesh, {ts::Shard(0)});
    const ts::DTensor inferred = ts::one_hot(dl);
    CHECK(inferred.placements() == ts::Placements{ts::Shard(0)});
    CHECK(inferred.shape() == ts::Shape{4, 6});
    check_close(global(inferred), hot);
    check_close(global(ts::one_hot(dl, 7)), ts::one_hot(labels, 7));
  }
}
