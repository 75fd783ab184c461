// Planning one training step of a Llama-7B-shaped model (32 layers, dim 4096, 32 heads, 8 kv
// heads, seq 2048, global batch 256, bfloat16) on 1024 simulated ranks, shapes only, as
// `tessera plan --model transformer --mesh 128x8` does: the meta backend, torchtitan's
// tensor-parallel plan on tp (8), fully_shard on every block and the root over dp (128), then
// forward, loss parallel cross entropy and backward under a CommCounter.
//
// How to read it:
//   BM_Plan7B/L   one plan of an L-layer model of that shape: making the model, laying it out over
//                 the mesh and running the step (everything the CLI times but the printing).
//                 L = 2 isolates the per-layer cost from the fixed one; L = 32 is the 7B model.
//   calls         counter: collective calls the step issued (the CLI prints the same count; a
//                 change here means the plan changed, not just its speed).
#include <benchmark/benchmark.h>

#include <optional>
#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

constexpr int64_t kDp = 128, kTp = 8, kVocab = 32000;

// torchtitan's tensor-parallel plan for its Llama, with loss parallel (the CLI's plan).
ts::ParallelizePlan tensor_parallel_plan() {
  using ts::Replicate, ts::Shard;
  return {
      {"tok_embeddings", ts::RowwiseParallel{.input_layouts = Replicate(), .output_layouts = Shard(1)}},
      {"norm", ts::SequenceParallel{}},
      {"output",
       ts::ColwiseParallel{
           .input_layouts = Shard(1), .output_layouts = Shard(-1), .use_local_output = false}},
      {"layers.*.attention_norm", ts::SequenceParallel{}},
      {"layers.*.attention", ts::PrepareModuleInput{{Shard(1), std::nullopt, std::nullopt},
                                                    {Replicate(), std::nullopt, std::nullopt}}},
      {"layers.*.attention.wq", ts::ColwiseParallel{}},
      {"layers.*.attention.wk", ts::ColwiseParallel{}},
      {"layers.*.attention.wv", ts::ColwiseParallel{}},
      {"layers.*.attention.wo", ts::RowwiseParallel{.output_layouts = Shard(1)}},
      {"layers.*.ffn_norm", ts::SequenceParallel{}},
      {"layers.*.feed_forward", ts::PrepareModuleInput{{Shard(1)}, {Replicate()}}},
      {"layers.*.feed_forward.w1", ts::ColwiseParallel{}},
      {"layers.*.feed_forward.w2", ts::RowwiseParallel{.output_layouts = Shard(1)}},
      {"layers.*.feed_forward.w3", ts::ColwiseParallel{}},
  };
}

// One plan; returns the collective calls of the step.
int64_t plan_once(int64_t layers) {
  ts::LocalMode mode(static_cast<int>(kDp * kTp));
  const ts::DeviceMesh mesh = ts::init_device_mesh("meta", {kDp, kTp}, {"dp", "tp"});
  ts::models::TransformerArgs args;
  args.n_layers = layers;
  args.n_kv_heads = 8;
  args.vocab_size = kVocab;
  args.dtype = ts::kBFloat16;
  args.backend = "meta";
  ts::models::Transformer model = [&] {
    const auto plain = ts::maybe_disable_local_mode();
    return ts::models::Transformer(args);
  }();
  ts::parallelize_module(model, mesh["tp"], tensor_parallel_plan());
  for (const auto& layer : *model->layers) ts::fully_shard(*layer, {.mesh = mesh["dp"]});
  ts::fully_shard(model, {.mesh = mesh["dp"]});

  ts::Tensor global;
  {
    const auto plain = ts::maybe_disable_local_mode();
    global = ts::zeros({256, args.max_seq_len}, ts::TensorOptions(ts::kInt64).backend("meta"));
  }
  const ts::Tensor tokens = ts::distribute_tensor(global, mesh, {ts::Shard(0), ts::Replicate()}).to_local();

  const ts::CommCounter counter;
  std::optional<ts::DTensor> loss;
  {
    const ts::nn::Value logits = model(tokens);
    const ts::LossParallel loss_parallel;
    const ts::DTensor target = ts::from_local(tokens, mesh["tp"], {ts::Replicate()});
    loss = ts::cross_entropy(logits.dtensor().view({-1, kVocab}), target.view({-1}));
  }
  {
    const ts::LossParallel loss_parallel;
    loss->backward();
  }
  int64_t calls = 0;
  for (const ts::CommCounter::Entry& e : counter.entries()) calls += e.calls;
  return calls;
}

void BM_Plan7B(benchmark::State& state) {
  int64_t calls = 0;
  for (auto _ : state) calls = plan_once(state.range(0));
  state.counters["calls"] = static_cast<double>(calls);
}
BENCHMARK(BM_Plan7B)->Arg(2)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
