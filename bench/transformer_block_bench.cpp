// Forward + backward of one Llama-style block (dim 512, 8 heads, seq 256, batch 4, float32),
// simulated on a (dp=2, tp=4) mesh of 8 ranks with Megatron sequence parallelism, against its
// unique work: the same block run densely once per data-parallel replica (batch 2 each).
//
//   h   = x + wo(attention(rope-free q, k, v of rms_norm(x)))      heads sharded over tp
//   out = h + w2(silu(w1(rms_norm(h))) * w3(rms_norm(h)))          SwiGLU, hidden sharded over tp
//
// Placements (dp, tp): x [S(0), S(1)] (batch over dp, sequence over tp); norms run on the
// sequence shard with no communication; an all_gather over tp before each column-parallel half,
// a reduce_scatter after each row-parallel one; weights [R, S(1)] (column) and [R, S(0)] (row),
// norm weights replicated.
//
// How to read it:
//   BM_BlockUnique         the unique work: dense forward + backward, once per dp replica.
//   BM_BlockSimulated/T    the simulated program (T rank threads); counter x_unique = its time /
//                          the unique work's, both timed in every iteration of the same run.
// The simulated gradients are checked against the dense ones once before timing.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

constexpr int64_t kBatch = 4, kSeq = 256, kDim = 512, kHeads = 8, kHidden = 1536;
constexpr int64_t kHeadDim = kDim / kHeads;
constexpr double kEps = 1e-5;

struct Block {
  ts::Tensor x, norm1, wq, wk, wv, wo, norm2, w1, w3, w2;
};

Block make_block() {
  auto off = ts::maybe_disable_local_mode();
  ts::Generator g(7);
  const double in_scale = 1.0 / std::sqrt(static_cast<double>(kDim));
  const double hidden_scale = 1.0 / std::sqrt(static_cast<double>(kHidden));
  return {ts::randn({kBatch, kSeq, kDim}, g),
          ts::ones({kDim}),
          ts::randn({kDim, kDim}, g) * in_scale,
          ts::randn({kDim, kDim}, g) * in_scale,
          ts::randn({kDim, kDim}, g) * in_scale,
          ts::randn({kDim, kDim}, g) * in_scale,
          ts::ones({kDim}),
          ts::randn({kDim, kHidden}, g) * in_scale,
          ts::randn({kDim, kHidden}, g) * in_scale,
          ts::randn({kHidden, kDim}, g) * hidden_scale};
}

// The block on dense tensors of batch `b`.
ts::Tensor dense_block(const ts::Tensor& x, const Block& w) {
  const int64_t b = x.size(0);
  auto heads = [&](const ts::Tensor& t) { return t.view({b, kSeq, kHeads, kHeadDim}).transpose(1, 2); };
  const ts::Tensor n1 = ts::rms_norm(x, {kDim}, w.norm1, kEps);
  const ts::Tensor a = ts::scaled_dot_product_attention(
      heads(ts::matmul(n1, w.wq)), heads(ts::matmul(n1, w.wk)), heads(ts::matmul(n1, w.wv)), {}, 0.0, true);
  const ts::Tensor h = x + ts::matmul(a.transpose(1, 2).reshape({b, kSeq, kDim}), w.wo);
  const ts::Tensor n2 = ts::rms_norm(h, {kDim}, w.norm2, kEps);
  return h + ts::matmul(ts::silu(ts::matmul(n2, w.w1)) * ts::matmul(n2, w.w3), w.w2);
}

struct DBlock {
  ts::DTensor x, norm1, wq, wk, wv, wo, norm2, w1, w3, w2;
};

// The block on DTensors: sequence parallel over tp, batch over dp.
ts::DTensor simulated_block(const DBlock& w) {
  const int64_t b = kBatch;
  const ts::Placements whole_seq = {ts::Shard(0), ts::Replicate()};
  const ts::Placements seq_shard = {ts::Shard(0), ts::Shard(1)};
  auto heads = [&](const ts::DTensor& t) {
    return ts::transpose(ts::view(t, {b, kSeq, kHeads, kHeadDim}), 1, 2);
  };
  const ts::DTensor n1 = ts::rms_norm(w.x, {kDim}, w.norm1, kEps).redistribute(whole_seq);
  const ts::DTensor a = ts::scaled_dot_product_attention(
      heads(ts::matmul(n1, w.wq)), heads(ts::matmul(n1, w.wk)), heads(ts::matmul(n1, w.wv)), {}, 0.0, true);
  const ts::DTensor attn = ts::matmul(ts::reshape(ts::transpose(a, 1, 2), {b, kSeq, kDim}), w.wo);
  const ts::DTensor h = w.x + attn.redistribute(seq_shard);
  const ts::DTensor n2 = ts::rms_norm(h, {kDim}, w.norm2, kEps).redistribute(whole_seq);
  const ts::DTensor mlp = ts::matmul(ts::silu(ts::matmul(n2, w.w1)) * ts::matmul(n2, w.w3), w.w2);
  return h + mlp.redistribute(seq_shard);
}

DBlock distribute(const Block& p, const ts::DeviceMesh& mesh) {
  const ts::Placements column = {ts::Replicate(), ts::Shard(1)};
  const ts::Placements row = {ts::Replicate(), ts::Shard(0)};
  const ts::Placements replicated = {ts::Replicate(), ts::Replicate()};
  auto param = [&](const ts::Tensor& t, const ts::Placements& pl) {
    return ts::distribute_tensor(t, mesh, pl).set_requires_grad(true);
  };
  return {ts::distribute_tensor(p.x, mesh, {ts::Shard(0), ts::Shard(1)}),
          param(p.norm1, replicated),
          param(p.wq, column),
          param(p.wk, column),
          param(p.wv, column),
          param(p.wo, row),
          param(p.norm2, replicated),
          param(p.w1, column),
          param(p.w3, column),
          param(p.w2, row)};
}

// One dense step per dp replica: forward and backward on its half of the batch.
void unique_work(const Block& p, std::vector<ts::Tensor>& params) {
  for (int64_t replica = 0; replica < 2; ++replica) {
    const ts::Tensor x = p.x.narrow(0, replica * (kBatch / 2), kBatch / 2);
    Block w = p;
    w.norm1 = params[0], w.wq = params[1], w.wk = params[2], w.wv = params[3], w.wo = params[4];
    w.norm2 = params[5], w.w1 = params[6], w.w3 = params[7], w.w2 = params[8];
    ts::sum(dense_block(x, w)).backward();
  }
}

std::vector<ts::Tensor> dense_params(const Block& p) {
  std::vector<ts::Tensor> out;
  for (const ts::Tensor& t : {p.norm1, p.wq, p.wk, p.wv, p.wo, p.norm2, p.w1, p.w3, p.w2})
    out.push_back(t.clone().set_requires_grad(true));
  return out;
}

}  // namespace

static void BM_BlockUnique(benchmark::State& state) {
  const Block p = make_block();
  std::vector<ts::Tensor> params = dense_params(p);
  for (auto _ : state) {
    unique_work(p, params);
    for (ts::Tensor& t : params) t.zero_grad(true);
  }
}
BENCHMARK(BM_BlockUnique)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_BlockSimulated(benchmark::State& state) {
  ts::set_threads(static_cast<int>(state.range(0)));
  const Block p = make_block();
  std::vector<ts::Tensor> params = dense_params(p);
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 4}, {"dp", "tp"});
  const DBlock w = distribute(p, mesh);
  auto step = [&] { ts::sum(simulated_block(w)).backward(); };

  {  // One checked step: the simulated wq gradient equals the dense one.
    step();
    {
      auto off = ts::maybe_disable_local_mode();
      unique_work(p, params);
    }
    ts::NoGradGuard no_grad;
    if (!ts::allclose(w.wq.grad().full_tensor().reconcile(), params[1].grad(), 1e-3, 1e-4)) {
      state.SkipWithError("the simulated block's gradient differs from the dense one");
      ts::set_threads(0);
      return;
    }
  }
  using Clock = std::chrono::steady_clock;
  double simulated_seconds = 0, unique_seconds = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    step();
    const auto middle = Clock::now();
    {
      auto off = ts::maybe_disable_local_mode();
      unique_work(p, params);
    }
    const auto end = Clock::now();
    simulated_seconds += std::chrono::duration<double>(middle - start).count();
    unique_seconds += std::chrono::duration<double>(end - middle).count();
    state.SetIterationTime(std::chrono::duration<double>(middle - start).count());
  }
  state.counters["x_unique"] = simulated_seconds / unique_seconds;
  ts::set_threads(0);
}
BENCHMARK(BM_BlockSimulated)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseManualTime();

BENCHMARK_MAIN();
