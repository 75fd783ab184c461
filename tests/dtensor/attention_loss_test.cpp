// scaled_dot_product_attention and cross_entropy on DTensors: values and gradients equal the dense
// ops' on 1 to 4 ranks; heads- and batch-sharded attention and loss-parallel cross_entropy
// communicate only what the rules promise (counted with CommCounter).
#include "transformer_test_support.hpp"

namespace ts = tessera;
using tt::calls_named;
using tt::check_close;
using tt::global;
using tt::pattern;

namespace {

struct Dense {
  ts::Tensor out, dq, dk, dv;
};

// Dense attention and the gradients of sum(out * c).
Dense dense_attention(const ts::Tensor& q0, const ts::Tensor& k0, const ts::Tensor& v0, const ts::Tensor& c,
                      bool causal, bool gqa = false) {
  ts::Tensor q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_(),
             v = v0.clone().requires_grad_();
  const ts::Tensor out = ts::scaled_dot_product_attention(q, k, v, {}, 0.0, causal, std::nullopt, gqa);
  ts::sum(out * c).backward();
  return {out.detach(), q.grad(), k.grad(), v.grad()};
}

}  // namespace

TEST_CASE(
    "attention with heads or batch sharded: sharded output, no communication, dense values and gradients") {
  const ts::Tensor q0 = pattern({2, 3, 4, 2}, 0.9, 0.3), k0 = pattern({2, 3, 5, 2}, 0.7, 0.2);
  const ts::Tensor v0 = pattern({2, 3, 5, 3}, 1.1, 0.5), c = pattern({2, 3, 4, 3}, 0.6, 0.2);
  for (bool causal : {false, true}) {
    const Dense expected = dense_attention(q0, k0, v0, c, causal);
    for (int64_t dim : {1, 0}) {
      for (int n : {1, 2, 3, 4}) {
        CAPTURE(causal);
        CAPTURE(dim);
        CAPTURE(n);
        const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n}, {"tp"});
        const ts::Placements shard = {ts::Shard(dim)};
        ts::DTensor q = ts::distribute_tensor(q0, mesh, shard).set_requires_grad(true);
        ts::DTensor k = ts::distribute_tensor(k0, mesh, shard).set_requires_grad(true);
        ts::DTensor v = ts::distribute_tensor(v0, mesh, shard).set_requires_grad(true);
        ts::CommCounter forward;
        const ts::DTensor out = ts::scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
        CHECK(forward.calls() == 0);
        CHECK(out.placements() == shard);
        check_close(global(out), expected.out);
        const ts::DTensor loss = ts::sum(ts::mul(out, ts::distribute_tensor(c, mesh, shard)));
        ts::CommCounter backward;
        loss.backward();
        CHECK(calls_named(backward, "gather") == 0);
        check_close(global(q.grad()), expected.dq);
        check_close(global(k.grad()), expected.dk);
        check_close(global(v.grad()), expected.dv);
      }
    }
  }
}

TEST_CASE(
    "attention on DTensors: a bool mask follows the shard, grouped heads replicate the heads dim, a bad "
    "dropout_p") {
  const ts::Tensor q0 = pattern({2, 4, 3, 2}, 0.9, 0.3), k0 = pattern({2, 2, 3, 2}, 0.7, 0.2);
  const ts::Tensor v0 = pattern({2, 2, 3, 2}, 1.1, 0.5);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  const ts::Tensor gqa = ts::scaled_dot_product_attention(q0, k0, v0, {}, 0.0, true, std::nullopt, true);
  const ts::DTensor out = ts::scaled_dot_product_attention(
      ts::distribute_tensor(q0, mesh, {ts::Shard(0)}), ts::distribute_tensor(k0, mesh, {ts::Shard(0)}),
      ts::distribute_tensor(v0, mesh, {ts::Shard(0)}), {}, 0.0, true, std::nullopt, true);
  CHECK(out.placements() == ts::Placements{ts::Shard(0)});
  check_close(global(out), gqa);
  // A [B, 1, L, S] mask is sharded with the batch.
  const ts::Tensor q1 = pattern({2, 2, 3, 2}, 0.9, 0.3);
  const ts::Tensor mask = ts::from_values(
      std::vector<bool>{true, false, true, true, true, false, false, true, true, true, true, true},
      {2, 1, 3, 2});
  const ts::Tensor dense = ts::scaled_dot_product_attention(q1, k0.narrow(2, 0, 2), v0.narrow(2, 0, 2), mask);
  ts::CommCounter counter;
  const ts::DTensor masked = ts::scaled_dot_product_attention(
      ts::distribute_tensor(q1, mesh, {ts::Shard(0)}),
      ts::distribute_tensor(k0.narrow(2, 0, 2).contiguous(), mesh, {ts::Shard(0)}),
      ts::distribute_tensor(v0.narrow(2, 0, 2).contiguous(), mesh, {ts::Shard(0)}),
      ts::distribute_tensor(mask, mesh, {ts::Shard(0)}));
  CHECK(counter.calls() == 0);
  check_close(global(masked), dense);
  const ts::DTensor q = ts::distribute_tensor(q1, mesh, {ts::Shard(1)});
  CHECK_THROWS_WITH_AS(ts::scaled_dot_product_attention(q, q, q, {}, 1.5),
                       doctest::Contains("dropout_p is 1.5"), ts::Error);
}

TEST_CASE("attention dropout on DTensors drops the weights the dense op drops with the same seed") {
  const ts::Tensor q0 = pattern({2, 3, 4, 2}, 0.9, 0.3), k0 = pattern({2, 3, 5, 2}, 0.7, 0.2);
  const ts::Tensor v0 = pattern({2, 3, 5, 3}, 1.1, 0.5), c = pattern({2, 3, 4, 3}, 0.6, 0.2);
  ts::Tensor q = q0.clone().requires_grad_();
  ts::manual_seed(123);
  const ts::Tensor expected = ts::scaled_dot_product_attention(q, k0, v0, {}, 0.4, true);
  ts::sum(expected * c).backward();
  for (const ts::Placements& placements :
       {ts::Placements{ts::Shard(1)}, ts::Placements{ts::Shard(0)}, ts::Placements{ts::Replicate()}}) {
    for (int n : {2, 3}) {
      CAPTURE(ts::placements_text(placements));
      CAPTURE(n);
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
      ts::DTensor dq = ts::distribute_tensor(q0, mesh, placements).set_requires_grad(true);
      ts::manual_seed(123);
      const ts::DTensor out =
          ts::scaled_dot_product_attention(dq, ts::distribute_tensor(k0, mesh, placements),
                                           ts::distribute_tensor(v0, mesh, placements), {}, 0.4, true);
      check_close(global(out), expected.detach());
      ts::sum(ts::mul(out, ts::distribute_tensor(c, mesh, placements))).backward();
      check_close(global(dq.grad()), q.grad());
    }
  }
}

namespace {

// Dense cross_entropy and the gradient of the loss (or of sum(loss * c) for "none").
std::pair<ts::Tensor, ts::Tensor> dense_loss(const ts::Tensor& x0, const ts::Tensor& target,
                                             const ts::CrossEntropyOptions& options) {
  ts::Tensor x = x0.clone().requires_grad_();
  const ts::Tensor loss = ts::cross_entropy(x, target, options);
  (options.reduction == "none" ? ts::sum(loss * pattern(loss.sizes(), 0.5, 0.1)) : loss).backward();
  return {loss.detach(), x.grad()};
}

ts::DTensor reduce_for_backward(const ts::DTensor& loss, const ts::CrossEntropyOptions& options) {
  if (options.reduction != "none") return loss;
  return ts::sum(
      ts::mul(loss, ts::distribute_tensor(pattern(loss.shape(), 0.5, 0.1), loss.device_mesh(),
                                          ts::Placements(loss.placements().size(), ts::Replicate()))));
}

}  // namespace

TEST_CASE(
    "loss parallel: vocab-sharded cross_entropy with only all_reduces of N values, 1 to 4 ranks, uneven "
    "vocab") {
  const int64_t N = 5;
  for (int64_t vocab : {7, 8}) {
    const ts::Tensor x0 = pattern({N, vocab}, 2.0, 0.7);
    for (const ts::CrossEntropyOptions& options :
         {ts::CrossEntropyOptions{}, ts::CrossEntropyOptions{.reduction = "sum"},
          ts::CrossEntropyOptions{.reduction = "none", .label_smoothing = 0.25},
          ts::CrossEntropyOptions{.ignore_index = 0, .label_smoothing = 0.1}}) {
      // -100 is a class index out of range unless it is the ignore_index.
      const ts::Tensor target = ts::tensor({6L, 0L, options.ignore_index == -100 ? -100L : 1L, 3L, 0L});
      const auto [expected, expected_grad] = dense_loss(x0, target, options);
      for (int n : {1, 2, 3, 4}) {
        CAPTURE(vocab);
        CAPTURE(options.reduction);
        CAPTURE(options.label_smoothing);
        CAPTURE(n);
        const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n}, {"tp"});
        ts::DTensor x = ts::distribute_tensor(x0, mesh, {ts::Shard(-1)}).set_requires_grad(true);
        const ts::DTensor t = ts::distribute_tensor(target, mesh, {ts::Replicate()});
        const int64_t per_call =
            n > 1 ? tt::all_reduce_bytes(mesh, N) : 0;  // measured before `forward` counts
        ts::DTensor loss = [&] {
          ts::LossParallel scope;
          ts::CommCounter forward;
          ts::DTensor l = ts::cross_entropy(x, t, options);
          const int64_t reductions = options.label_smoothing > 0 ? 4 : 3;
          CHECK(calls_named(forward, "gather") == 0);
          if (n > 1) {
            CHECK(forward.calls("all_reduce") == reductions);
            CHECK(forward.calls() == reductions);
            CHECK(forward.bytes_per_rank() == reductions * per_call);  // N values each
          }
          return l;
        }();
        CHECK(loss.placements() == ts::Placements{ts::Replicate()});
        check_close(global(loss), expected);
        const ts::DTensor reduced = reduce_for_backward(loss, options);
        ts::CommCounter backward;
        reduced.backward();
        CHECK(backward.calls() == 0);
        CHECK(x.grad().placements() == ts::Placements{ts::Shard(1)});
        check_close(global(x.grad()), expected_grad);
      }
    }
  }
}

TEST_CASE(
    "cross_entropy on DTensors outside LossParallel gathers the class shards first, batch shards stay") {
  const ts::Tensor x0 = pattern({5, 7}, 2.0, 0.7);
  const ts::Tensor target = ts::tensor({6L, 0L, -100L, 3L, 6L});
  const auto [expected, expected_grad] = dense_loss(x0, target, {});
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::DTensor x = ts::distribute_tensor(x0, mesh, {ts::Shard(1)}).set_requires_grad(true);
  ts::CommCounter counter;
  const ts::DTensor loss = ts::cross_entropy(x, ts::distribute_tensor(target, mesh, {ts::Replicate()}));
  // As PyTorch: the class dim is replicated (one all_gather), not moved to a batch shard.
  CHECK(calls_named(counter, "gather") == 1);
  CHECK(counter.calls() == calls_named(counter, "gather"));
  check_close(global(loss), expected);
  loss.backward();
  check_close(global(x.grad()), expected_grad);

  ts::DTensor xb = ts::distribute_tensor(x0, mesh, {ts::Shard(0)}).set_requires_grad(true);
  const ts::DTensor none =
      ts::cross_entropy(xb, ts::distribute_tensor(target, mesh, {ts::Shard(0)}), {.reduction = "none"});
  CHECK(none.placements() == ts::Placements{ts::Shard(0)});
  check_close(global(none), dense_loss(x0, target, {.reduction = "none"}).first);
  const ts::DTensor mean = ts::cross_entropy(xb, ts::distribute_tensor(target, mesh, {ts::Shard(0)}));
  check_close(global(mean), expected);
  mean.backward();
  check_close(global(xb.grad()), expected_grad);
}

TEST_CASE("loss parallel on a 2-d mesh (dp x tp), and its errors") {
  const ts::Tensor x0 =
      pattern({4, 2, 7}, 2.0, 0.7).reshape({4, 2, 7}).permute({0, 2, 1}).contiguous();  // (N, C, d)
  const ts::Tensor target = ts::tensor({{6L, 0L}, {-100L, 3L}, {1L, 5L}, {2L, 2L}});
  const auto [expected, expected_grad] = dense_loss(x0, target, {.label_smoothing = 0.2});
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  ts::DTensor x = ts::distribute_tensor(x0, mesh, {ts::Shard(0), ts::Shard(1)}).set_requires_grad(true);
  ts::LossParallel scope;
  ts::CommCounter forward;
  const ts::DTensor loss = ts::cross_entropy(
      x, ts::distribute_tensor(target, mesh, {ts::Shard(0), ts::Replicate()}), {.label_smoothing = 0.2});
  CHECK(calls_named(forward, "gather") == 0);
  check_close(global(loss), expected);
  loss.backward();
  check_close(global(x.grad()), expected_grad);

  const ts::DeviceMesh wide = ts::init_device_mesh("cpu", {4});
  const ts::DTensor narrow = ts::distribute_tensor(pattern({2, 3}, 1.0, 0.0), wide, {ts::Shard(1)});
  CHECK_THROWS_WITH_AS(
      ts::cross_entropy(narrow, ts::distribute_tensor(ts::tensor({0L, 1L}), wide, {ts::Replicate()})),
      doctest::Contains("holds none of the 3 classes"), ts::Error);
  const ts::DTensor x2 = ts::distribute_tensor(pattern({2, 7}, 1.0, 0.0), wide, {ts::Shard(1)});
  CHECK_THROWS_WITH_AS(
      ts::cross_entropy(x2, ts::distribute_tensor(ts::tensor({0L, 7L}), wide, {ts::Replicate()})),
      doctest::Contains("target 7 is out of bounds for 7 classes"), ts::Error);
  CHECK_THROWS_WITH_AS(
      ts::cross_entropy(x2, ts::distribute_tensor(ts::tensor({0L}), wide, {ts::Replicate()})),
      doctest::Contains("target has shape [1]"), ts::Error);
}

TEST_CASE("LossParallel is per thread and restores the previous setting") {
  CHECK_FALSE(ts::loss_parallel());
  {
    ts::LossParallel outer;
    CHECK(ts::loss_parallel());
    bool other = true;
    std::thread([&] { other = ts::loss_parallel(); }).join();
    CHECK_FALSE(other);
  }
  CHECK_FALSE(ts::loss_parallel());
}

TEST_CASE("mse_loss on DTensors equals the dense loss") {
  const ts::Tensor a = pattern({6, 2}, 1.0, 0.3), b = pattern({6, 2}, 0.4, -0.1);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
  const ts::DTensor da = ts::distribute_tensor(a, mesh, {ts::Shard(0)}),
                    db = ts::distribute_tensor(b, mesh, {ts::Shard(0)});
  for (const char* reduction : {"mean", "sum", "none"})
    check_close(global(ts::mse_loss(da, db, reduction)), ts::mse_loss(a, b, reduction));
}

TEST_CASE(
    "the transformer contract compiles and runs: rms_norm, causal attention, flattened cross_entropy, bf16, "
    "LossParallel") {
  const int64_t vocab = 7, dim = 2;
  const ts::Tensor x = pattern({1, 4, dim}, 0.8, 0.1);
  const ts::Tensor w_norm = ts::ones({dim});
  ts::Tensor h = ts::rms_norm(x, {dim}, w_norm, 1e-5);
  CHECK(h.sizes() == x.sizes());
  ts::Tensor hb = h.to(ts::kBFloat16);
  CHECK(hb.dtype() == ts::kBFloat16);
  const ts::Tensor q = pattern({1, 2, 4, 2}, 0.9, 0.3), k = pattern({1, 2, 4, 2}, 0.7, 0.2);
  const ts::Tensor v = pattern({1, 2, 4, 2}, 1.1, 0.5);
  ts::Tensor a = ts::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
  CHECK(a.sizes() == ts::Shape{1, 2, 4, 2});
  const ts::Tensor logits = pattern({2, 3, vocab}, 2.0, 0.7);
  const ts::Tensor tokens = ts::tensor({{1L, 6L, -100L}, {0L, 3L, 2L}});
  ts::Tensor loss = ts::cross_entropy(logits.view({-1, vocab}), tokens.view({-1}), {.ignore_index = -100});
  CHECK(loss.dim() == 0);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3}, {"tp"});
  ts::DTensor dlogits =
      ts::distribute_tensor(logits.view({-1, vocab}), mesh, {ts::Shard(-1)}).set_requires_grad(true);
  const ts::DTensor dtarget = ts::distribute_tensor(tokens.view({-1}), mesh, {ts::Replicate()});
  {
    ts::LossParallel lp;
    auto dloss = ts::cross_entropy(dlogits, dtarget);
    dloss.backward();
    check_close(global(dloss), loss);
  }
  CHECK(dlogits.has_grad());
}
