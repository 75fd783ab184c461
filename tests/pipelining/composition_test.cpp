// Pipeline x FSDP x TP on a (pp=2, dp=2, tp=2) mesh of 8 ranks (ts::spawn): the reference
// Transformer (dim 64, 4 layers, vocab 256, sequence 32) cut into two stages of two layers, each
// stage tensor-parallel (torchtitan's plan, sequence and loss parallel) on tp and fully sharded on
// dp, trained for a few SGD steps by Schedule1F1B and ScheduleGPipe with 4 micro-batches. The
// reference is the unsplit dense model on one rank, trained on the same micro-batches (micro-batch
// k of the dense run holds each dp replica's micro-batch k), its gradients accumulated in
// micro-batch order and scaled by 1/4.
//
// Tolerance: 1e-5 relative. The pipelined run reduces in other orders than the dense one: tensor
// parallelism sums a matmul's partial products over tp ranks, sequence parallelism and FSDP's
// reduce-scatter sum over ranks, and loss parallelism reduces the log-sum-exp over vocabulary
// shards; float32 rounding then differs in the last bits. Two pipelined runs are bitwise equal.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "../same_bits.hpp"

namespace ts = tessera;

namespace {

constexpr int64_t kVocab = 256, kSeq = 32, kBatch = 8, kMicro = 4, kSteps = 3;
constexpr double kLr = 0.1;

ts::models::TransformerArgs model_args() {
  ts::models::TransformerArgs args;
  args.dim = 64;
  args.n_layers = 4;
  args.n_heads = 4;
  args.n_kv_heads = 2;
  args.vocab_size = kVocab;
  args.ffn_hidden = 176;
  args.max_seq_len = kSeq;
  return args;
}

// Step s's batch [kBatch, kSeq + 1] of tokens (inputs and next-token targets).
ts::Tensor batch_of(int64_t step) {
  std::vector<int64_t> tokens(static_cast<size_t>(kBatch * (kSeq + 1)));
  uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(step + 1);
  for (int64_t& t : tokens) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t = static_cast<int64_t>((state >> 33) % kVocab);
  }
  return ts::from_values(tokens, {kBatch, kSeq + 1});
}
ts::Tensor inputs_of(const ts::Tensor& batch) { return batch.narrow(1, 0, kSeq).contiguous(); }
ts::Tensor targets_of(const ts::Tensor& batch) { return batch.narrow(1, 1, kSeq).contiguous(); }

struct Run {
  std::vector<std::vector<double>> losses;                       // [step][micro-batch]
  std::vector<std::map<std::string, std::vector<float>>> grads;  // [step] parameter name -> full gradient
};

std::vector<float> values(const ts::Tensor& t) { return t.contiguous().to_vector<float>(); }

// The dense model, unsplit, on the whole batch: micro-batch k is rows {k, k + 4} (dp replica 0's
// micro-batch k and replica 1's).
Run dense_run() {
  Run run;
  ts::manual_seed(2026);
  ts::models::Transformer model(model_args());
  ts::optim::SGD optimizer(model->parameters(), {.lr = kLr});
  for (int64_t step = 0; step < kSteps; ++step) {
    const ts::Tensor batch = batch_of(step);
    optimizer.zero_grad();
    std::vector<double> losses;
    for (int64_t k = 0; k < kMicro; ++k) {
      const ts::Tensor rows = ts::from_values(std::vector<int64_t>{k, k + kBatch / 2}, {2});
      const ts::Tensor micro = ts::index_select(batch, 0, rows);
      const ts::Tensor loss = ts::cross_entropy(model(inputs_of(micro)).tensor().view({-1, kVocab}),
                                                targets_of(micro).view({-1}));
      loss.backward();
      losses.push_back(loss.item<double>());
    }
    std::map<std::string, std::vector<float>> grads;
    {
      const ts::NoGradGuard off;
      for (const auto& [name, p] : model->named_parameters()) {
        ts::Tensor value = p.tensor();
        value.set_grad(value.grad() * (1.0 / static_cast<double>(kMicro)));
        grads[name] = values(value.grad());
      }
    }
    optimizer.step();
    run.losses.push_back(losses);
    run.grads.push_back(grads);
  }
  return run;
}

enum class Kind { one_f_one_b, gpipe };

// The pipelined run: 8 ranks, rank = pp * 4 + dp * 2 + tp. Each rank reports the losses (averaged
// over dp replicas, on the last stage) and the full gradients of its stage's parameters.
Run pipelined_run(Kind kind) {
  std::vector<Run> per_rank(8);
  ts::spawn(8,
            [&](int rank) {
              const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2, 2}, {"pp", "dp", "tp"});
              const int pp = rank / 4, dp = (rank / 2) % 2;
              ts::manual_seed(2026);
              const ts::models::Transformer whole(model_args());
              ts::models::TransformerStage stage(whole, 2 * pp, 2 * pp + 2);
              ts::parallelize_module(stage, mesh["tp"], ts::transformer_tp_plan(stage));
              for (const auto& [name, layer] : stage->layers->named_children())
                ts::fully_shard(*layer, {.mesh = mesh["dp"]});
              ts::fully_shard(stage, {.mesh = mesh["dp"]});

              ts::pipelining::PipelineStage pipeline_stage(stage, pp, 2, mesh["pp"].group(0));
              const ts::DeviceMesh tp_mesh = mesh["tp"];
              const auto loss_fn = [tp_mesh](const ts::Tensor& logits, const ts::Tensor& target) {
                const ts::LossParallel loss_parallel;
                const ts::DTensor sharded = ts::from_local(logits, tp_mesh, {ts::Shard(2)});
                const ts::DTensor replicated = ts::from_local(target, tp_mesh, {ts::Replicate()});
                return ts::cross_entropy(sharded.view({-1, kVocab}), replicated.view({-1})).to_local();
              };
              std::unique_ptr<ts::pipelining::PipelineScheduleSingle> schedule;
              if (kind == Kind::gpipe)
                schedule = std::make_unique<ts::pipelining::ScheduleGPipe>(pipeline_stage, kMicro, loss_fn);
              else
                schedule = std::make_unique<ts::pipelining::Schedule1F1B>(pipeline_stage, kMicro, loss_fn);
              ts::optim::SGD optimizer(stage->parameters(), {.lr = kLr});

              Run& mine = per_rank[static_cast<size_t>(rank)];
              for (int64_t step = 0; step < kSteps; ++step) {
                const ts::Tensor replica_rows = batch_of(step).narrow(0, dp * kBatch / 2, kBatch / 2);
                optimizer.zero_grad();
                std::vector<ts::Tensor> losses;
                if (pp == 0)
                  schedule->step(inputs_of(replica_rows));
                else
                  schedule->step({}, targets_of(replica_rows), &losses);
                std::vector<double> averaged;
                for (const ts::Tensor& loss : losses) {
                  ts::Tensor value =
                      loss.shard(rank).clone();  // the rank's own loss of its replica's micro-batch
                  ts::dist::all_reduce(value, ts::ReduceOp::AVG, mesh["dp"].group(0));
                  averaged.push_back(value.item<double>());
                }
                mine.losses.push_back(averaged);
                std::map<std::string, std::vector<float>> grads;
                for (const auto& [name, p] : stage->named_parameters()) {
                  REQUIRE(p.is_dtensor());
                  const ts::Tensor full = p.dtensor_grad().full_tensor();
                  REQUIRE(full.ranks() == ts::RankSet{rank});  // the rank holds its own value alone
                  grads[name] = values(full.shard(rank));
                }
                mine.grads.push_back(grads);
                optimizer.step();
              }
            },
            {.stack_bytes = 1 << 20});  // a Transformer's forward and backward run on the rank's stack

  // Every rank of a stage holds the same full gradients; the last stage's ranks the same losses.
  Run run;
  for (int64_t step = 0; step < kSteps; ++step) {
    run.losses.push_back(per_rank[4].losses[static_cast<size_t>(step)]);
    std::map<std::string, std::vector<float>> grads;
    for (int rank = 0; rank < 8; ++rank) {
      CAPTURE(rank);
      const Run& r = per_rank[static_cast<size_t>(rank)];
      if (rank >= 4) CHECK(test::same_bits(r.losses[static_cast<size_t>(step)], run.losses.back()));
      for (const auto& [parameter, g] : r.grads[static_cast<size_t>(step)]) {
        const std::string& name = parameter;  // named again: clang 14 cannot capture a structured binding
        CAPTURE(name);
        const auto [at, fresh] = grads.emplace(name, g);
        if (!fresh) CHECK(test::same_bits(at->second, g));
      }
    }
    run.grads.push_back(grads);
  }
  return run;
}

// |got - want| <= 1e-5 * max(|want|) per parameter (the gradient's scale; an element near zero has
// no relative error of its own to speak of).
void require_close(const Run& got, const Run& want) {
  REQUIRE(got.losses.size() == want.losses.size());
  for (size_t step = 0; step < want.losses.size(); ++step) {
    CAPTURE(step);
    REQUIRE(got.losses[step].size() == static_cast<size_t>(kMicro));
    for (size_t k = 0; k < static_cast<size_t>(kMicro); ++k) {
      CAPTURE(k);
      CHECK(std::abs(got.losses[step][k] - want.losses[step][k]) <= 1e-5 * std::abs(want.losses[step][k]));
    }
    REQUIRE(got.grads[step].size() == want.grads[step].size());  // every parameter, on some stage
    for (const auto& [parameter, w] : want.grads[step]) {
      const std::string& name = parameter;  // named again: clang 14 cannot capture a structured binding
      CAPTURE(name);
      REQUIRE(got.grads[step].count(name) == 1);
      const std::vector<float>& g = got.grads[step].at(name);
      REQUIRE(g.size() == w.size());
      float scale = 0;
      for (float x : w) scale = std::max(scale, std::abs(x));
      REQUIRE(scale > 0);  // a gradient that is all zeros would check nothing
      float worst = 0;
      for (size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::abs(g[i] - w[i]));
      CHECK(worst <= 1e-5f * scale);
    }
  }
}

}  // namespace

TEST_CASE(
    "pipeline x FSDP x TP on (pp=2, dp=2, tp=2): Schedule1F1B's losses and gradients match the dense run") {
  const Run dense = dense_run();
  const Run first = pipelined_run(Kind::one_f_one_b);
  require_close(first, dense);
  // The losses move: the steps train (a run stuck at its first loss would match less than it seems).
  CHECK(dense.losses.back().front() != dense.losses.front().front());

  const Run second = pipelined_run(Kind::one_f_one_b);
  for (size_t step = 0; step < first.losses.size(); ++step) {
    CHECK(test::same_bits(second.losses[step], first.losses[step]));
    for (const auto& [name, g] : first.grads[step]) CHECK(test::same_bits(second.grads[step].at(name), g));
  }
}

TEST_CASE(
    "pipeline x FSDP x TP on (pp=2, dp=2, tp=2): ScheduleGPipe's losses and gradients match the dense run") {
  require_close(pipelined_run(Kind::gpipe), dense_run());
}
