// embedding on DTensors: vocabulary-parallel (weight Shard(0), uneven shards and ranks without
// rows included), column-parallel (Shard(1)), sharded indices; values and weight gradients equal
// the dense op's, and the forward never communicates.
#include "transformer_test_support.hpp"

namespace ts = tessera;
using tt::check_close;
using tt::global;
using tt::pattern;

namespace {

const ts::Tensor kIndices = ts::tensor({{6L, 0L, 3L}, {3L, 5L, 1L}});

// The dense reference: output and d(sum(out * c))/d weight.
std::pair<ts::Tensor, ts::Tensor> dense_reference(const ts::Tensor& w0, const ts::Tensor& c) {
  ts::Tensor w = w0.clone().requires_grad_();
  const ts::Tensor out = ts::embedding(kIndices, w);
  ts::sum(out * c).backward();
  return {out.detach(), w.grad()};
}

}  // namespace

TEST_CASE("embedding, weight Shard(0): a Partial(sum) masked lookup without communication, 1 to 4 ranks") {
  for (int64_t vocab : {7, 2}) {  // vocab 2 leaves ranks 2 and 3 of 4 without rows
    const ts::Tensor indices = vocab == 7 ? kIndices : ts::tensor({{1L, 0L, 1L}, {1L, 1L, 0L}});
    const ts::Tensor w0 = pattern({vocab, 4}, 1.0, 0.3), c = pattern({2, 3, 4}, 0.8, 0.1);
    ts::Tensor w_dense = w0.clone().requires_grad_();
    const ts::Tensor expected = ts::embedding(indices, w_dense);
    ts::sum(expected * c).backward();
    for (int n : {1, 2, 3, 4}) {
      CAPTURE(vocab);
      CAPTURE(n);
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n}, {"tp"});
      ts::DTensor w = ts::distribute_tensor(w0, mesh, {ts::Shard(0)}).set_requires_grad(true);
      const ts::DTensor idx = ts::distribute_tensor(indices, mesh, {ts::Replicate()});
      ts::CommCounter forward;
      const ts::DTensor out = ts::embedding(idx, w);
      CHECK(forward.calls() == 0);
      CHECK(out.placements() == ts::Placements{ts::Partial("sum")});
      CHECK(out.shape() == ts::Shape{2, 3, 4});
      check_close(global(out), expected);
      ts::sum(ts::mul(out, ts::distribute_tensor(c, mesh, {ts::Replicate()}))).backward();
      CHECK(w.grad().placements() == ts::Placements{ts::Shard(0)});
      check_close(global(w.grad()), w_dense.grad());
    }
  }
}

TEST_CASE("embedding, weight Shard(1) gives Shard(-1), sharded indices give the same shard") {
  const ts::Tensor w0 = pattern({7, 5}, 1.0, 0.3), c = pattern({2, 3, 5}, 0.8, 0.1);
  const auto [expected, expected_grad] = dense_reference(w0, c);
  for (int n : {1, 2, 3, 4}) {
    CAPTURE(n);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    ts::DTensor w = ts::distribute_tensor(w0, mesh, {ts::Shard(1)}).set_requires_grad(true);
    ts::CommCounter forward;
    const ts::DTensor out = ts::embedding(kIndices, w);  // plain indices: Replicate
    CHECK(forward.calls() == 0);
    CHECK(out.placements() == ts::Placements{ts::Shard(2)});
    check_close(global(out), expected);
    ts::sum(ts::mul(out, ts::distribute_tensor(c, mesh, {ts::Shard(2)}))).backward();
    check_close(global(w.grad()), expected_grad);

    ts::DTensor wr = ts::distribute_tensor(w0, mesh, {ts::Replicate()}).set_requires_grad(true);
    const ts::DTensor rows = ts::embedding(ts::distribute_tensor(kIndices, mesh, {ts::Shard(1)}), wr);
    CHECK(rows.placements() == ts::Placements{ts::Shard(1)});
    check_close(global(rows), expected);
    ts::sum(ts::mul(rows, ts::distribute_tensor(c, mesh, {ts::Shard(1)}))).backward();
    check_close(global(wr.grad()), expected_grad);
  }
}

TEST_CASE("embedding on a 2-d mesh: batch-sharded indices and a vocabulary-parallel weight") {
  const ts::Tensor w0 = pattern({7, 4}, 1.0, 0.3), c = pattern({2, 3, 4}, 0.8, 0.1);
  const auto [expected, expected_grad] = dense_reference(w0, c);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 3}, {"dp", "tp"});
  ts::DTensor w = ts::distribute_tensor(w0, mesh, {ts::Replicate(), ts::Shard(0)}).set_requires_grad(true);
  const ts::DTensor idx = ts::distribute_tensor(kIndices, mesh, {ts::Shard(0), ts::Replicate()});
  const ts::DTensor out = ts::embedding(idx, w);
  CHECK(out.placements() == ts::Placements{ts::Shard(0), ts::Partial("sum")});
  check_close(global(out), expected);
  ts::sum(ts::mul(out, ts::distribute_tensor(c, mesh, {ts::Shard(0), ts::Replicate()}))).backward();
  check_close(global(w.grad()), expected_grad);
}

TEST_CASE("embedding on DTensors: out-of-range indices and a wrong weight are errors") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  const ts::DTensor w = ts::distribute_tensor(pattern({7, 4}, 1.0, 0.3), mesh, {ts::Shard(0)});
  CHECK_THROWS_WITH_AS(ts::embedding(ts::tensor({7L}), w),
                       doctest::Contains("index 7 is out of range for a vocabulary of 7 rows"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::embedding(ts::tensor({-1L}), w), doctest::Contains("index -1"), ts::Error);
  const ts::DTensor w1 = ts::distribute_tensor(pattern({7}, 1.0, 0.3), mesh, {ts::Shard(0)});
  CHECK_THROWS_WITH_AS(ts::embedding(ts::tensor({1L}), w1), doctest::Contains("expected 2 dims"), ts::Error);
}
