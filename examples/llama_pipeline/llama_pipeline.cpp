// Trains the reference Llama (dim 64, 4 layers, vocab 256, sequence 32) with pipeline parallelism x
// FSDP x tensor parallelism on a (pp=2, dp=2, tp=2) mesh of 8 ranks, each rank a per-rank program
// (ts::spawn), beside the same model trained densely on the same micro-batches. The same program
// runs in one process or across processes (a spawn in a world that spans processes runs there):
//
//   ./llama_pipeline                                          Schedule1F1B, 4 micro-batches, 5 SGD steps
//   ./llama_pipeline --schedule gpipe                         ScheduleGPipe
//   ./llama_pipeline --steps 2                                the first 2 steps only
//   TESSERA_RANKS_PER_PROCESS=4 mpirun -np 2 ./llama_pipeline 2 processes x 4 ranks
//   TESSERA_RANKS_PER_PROCESS=2 mpirun -np 4 ./llama_pipeline 4 processes x 2 ranks
//
// Every rank builds the whole model from one seed and keeps its stage (models::TransformerStage:
// layers 0-1 with the token embedding on pp rank 0, layers 2-3 with the final norm and output
// projection on pp rank 1), makes it tensor-parallel on mesh["tp"] (torchtitan's plan, sequence
// and loss parallel) and fully shards it on mesh["dp"], as torchtitan does. Each dp replica trains
// on its half of the batch. Each step prints the loss of every micro-batch (averaged over the
// replicas) beside the dense run's, and the end a line `final parameters checksum <hex>` (a hash of
// every parameter's bytes in name order) so that runs can be compared bit for bit.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace ts = tessera;

namespace {

constexpr int64_t kVocab = 256, kSeq = 32, kBatch = 8, kMicro = 4, kRanks = 8;
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

// Step s's batch [kBatch, kSeq + 1] of tokens (inputs and next-token targets), from a fixed linear
// congruential sequence: the same on every rank and every process.
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

uint64_t fnv1a(uint64_t hash, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

// The dense model on one rank: micro-batch k is every replica's micro-batch k (rows k and k + 4),
// gradients accumulated in micro-batch order and scaled by 1/kMicro, as the schedule does.
std::vector<std::vector<double>> dense_losses(int64_t steps) {
  ts::manual_seed(2026);
  ts::models::Transformer model(model_args());
  ts::optim::SGD optimizer(model->parameters(), {.lr = kLr});
  std::vector<std::vector<double>> losses(static_cast<size_t>(steps));
  for (int64_t step = 0; step < steps; ++step) {
    const ts::Tensor batch = batch_of(step);
    optimizer.zero_grad();
    for (int64_t k = 0; k < kMicro; ++k) {
      const ts::Tensor micro =
          ts::index_select(batch, 0, ts::from_values(std::vector<int64_t>{k, k + kBatch / 2}, {2}));
      const ts::Tensor loss = ts::cross_entropy(model(inputs_of(micro)).tensor().view({-1, kVocab}),
                                                targets_of(micro).view({-1}));
      loss.backward();
      losses[static_cast<size_t>(step)].push_back(loss.item<double>());
    }
    {
      const ts::NoGradGuard off;
      for (const ts::nn::Parameter& p : model->parameters()) {
        ts::Tensor value = p.tensor();
        value.set_grad(value.grad() * (1.0 / static_cast<double>(kMicro)));
      }
    }
    optimizer.step();
  }
  return losses;
}

// A rank's program: rank = pp * 4 + dp * 2 + tp, in a world over `processes` process(es). It trains
// as many steps as the dense run has losses for.
void train(int rank, int processes, bool gpipe, const std::vector<std::vector<double>>& dense,
           bool& all_close) {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2, 2}, {"pp", "dp", "tp"});
  const int pp = rank / 4, dp = (rank / 2) % 2;
  const bool printer = rank == 4;  // the last stage's first rank: it sees the losses

  ts::manual_seed(2026);
  const ts::models::Transformer whole(model_args());
  ts::models::TransformerStage stage(whole, 2 * pp, 2 * pp + 2);
  ts::parallelize_module(stage, mesh["tp"], ts::transformer_tp_plan(stage, /*loss_parallel=*/true));
  for (const auto& [name, layer] : stage->layers->named_children())
    ts::fully_shard(*layer, {.mesh = mesh["dp"]});
  ts::fully_shard(stage, {.mesh = mesh["dp"]});

  // The last stage's logits arrive as this rank's vocabulary shard; loss parallelism keeps them so.
  const ts::DeviceMesh tp_mesh = mesh["tp"];
  const auto loss_fn = [tp_mesh](const ts::Tensor& logits, const ts::Tensor& target) {
    const ts::LossParallel loss_parallel;
    const ts::DTensor sharded = ts::from_local(logits, tp_mesh, {ts::Shard(2)});
    const ts::DTensor replicated = ts::from_local(target, tp_mesh, {ts::Replicate()});
    return ts::cross_entropy(sharded.view({-1, kVocab}), replicated.view({-1})).to_local();
  };
  ts::pipelining::PipelineStage pipeline_stage(stage, pp, 2, mesh["pp"].group(0));
  std::unique_ptr<ts::pipelining::PipelineScheduleSingle> schedule;
  if (gpipe)
    schedule = std::make_unique<ts::pipelining::ScheduleGPipe>(pipeline_stage, kMicro, loss_fn);
  else
    schedule = std::make_unique<ts::pipelining::Schedule1F1B>(pipeline_stage, kMicro, loss_fn);
  if (printer)
    std::printf("%s on %d process(es), each pipeline rank's actions:\n%s\n",
                gpipe ? "ScheduleGPipe" : "Schedule1F1B", processes, schedule->table().c_str());
  ts::optim::SGD optimizer(stage->parameters(), {.lr = kLr});

  for (int64_t step = 0; step < static_cast<int64_t>(dense.size()); ++step) {
    const ts::Tensor replica_rows = batch_of(step).narrow(0, dp * kBatch / 2, kBatch / 2);
    optimizer.zero_grad();
    std::vector<ts::Tensor> losses;
    if (pp == 0)
      schedule->step(inputs_of(replica_rows));
    else
      schedule->step({}, targets_of(replica_rows), &losses);
    optimizer.step();
    if (pp == 0) continue;
    double worst = 0;
    std::string line;
    for (size_t k = 0; k < losses.size(); ++k) {
      // The rank's own loss of its replica's micro-batch k, averaged over the replicas.
      ts::Tensor loss = losses[k].shard(rank).clone();
      ts::dist::all_reduce(loss, ts::ReduceOp::AVG, mesh["dp"].group(0));
      const double value = loss.item<double>(), want = dense[static_cast<size_t>(step)][k];
      worst = std::max(worst, std::abs(value - want) / std::abs(want));
      line += (k == 0 ? "" : " ") + std::to_string(value).substr(0, 9);
    }
    all_close = all_close && worst <= 1e-5;
    if (printer)
      std::printf("step %lld  micro-batch losses %s  largest relative difference from the dense run %.2e\n",
                  static_cast<long long>(step + 1), line.c_str(), worst);
  }

  // Every parameter's full value, hashed in name order per stage; stage 0's hash travels to rank 4.
  uint64_t checksum = 14695981039346656037ull;
  for (const auto& [name, p] : stage->named_parameters()) {
    const std::vector<float> values = p.dtensor().full_tensor().shard(rank).to_vector<float>();
    checksum = fnv1a(checksum, name.data(), name.size());
    checksum = fnv1a(checksum, values.data(), values.size() * sizeof(float));
  }
  ts::Tensor stage_hash = ts::from_values(std::vector<int64_t>{static_cast<int64_t>(checksum)}, {1});
  if (rank == 0) ts::dist::send(stage_hash, 4, /*tag=*/0);
  if (printer) {
    ts::dist::recv(stage_hash, 0, /*tag=*/0);
    const auto first = static_cast<uint64_t>(stage_hash.to_vector<int64_t>()[0]);
    std::printf("losses %s the dense run within 1e-5 relative\n", all_close ? "match" : "DO NOT match");
    std::printf("final parameters checksum %016" PRIx64 "\n", fnv1a(first, &checksum, sizeof(checksum)));
  }
}

struct Options {
  bool gpipe = false;
  int64_t steps = 5;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg != "--schedule" && arg != "--steps")
      throw ts::Error("unknown option '" + arg +
                      "'; expected --schedule 1f1b, --schedule gpipe or --steps N");
    if (i + 1 >= argc) throw ts::Error(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--schedule") {
      if (value != "1f1b" && value != "gpipe")
        throw ts::Error("--schedule '" + value + "' is not 1f1b or gpipe");
      o.gpipe = value == "gpipe";
    } else {
      long long steps = 0;
      char extra = 0;
      if (std::sscanf(value.c_str(), "%lld%c", &steps, &extra) != 1 || steps < 1)
        throw ts::Error("--steps '" + value + "' must be a positive number of steps");
      o.steps = steps;
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse_options(argc, argv);
    // Under mpirun with a transport the world spans the processes, and the spawn below runs each
    // process's ranks there; otherwise it is this process alone and the spawn runs all 8 ranks here.
    const ts::World world = ts::init_world();
    if (world.num_processes() > 1 && world.size() != kRanks) {
      std::fprintf(
          stderr,
          "llama_pipeline needs a world of %lld ranks (processes x TESSERA_RANKS_PER_PROCESS), got %d\n",
          static_cast<long long>(kRanks), world.size());
      return 1;
    }
    const std::vector<std::vector<double>> dense = dense_losses(options.steps);
    bool all_close = true;
    // The program of each rank runs on a coroutine of its own: a Transformer's forward and backward
    // need more than the default stack.
    ts::spawn(kRanks, [&](int rank) { train(rank, world.num_processes(), options.gpipe, dense, all_close); },
              {.stack_bytes = 1 << 20});
    return all_close ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llama_pipeline: %s\n", e.what());
    return 1;
  }
}
