// Trains the reference Llama (dim 64, 2 layers, vocab 256, sequence 32) for 10 steps with FSDP,
// tensor parallelism, sequence parallelism and loss parallelism on a (dp=2, tp=2) mesh, beside the
// same model trained densely on the whole batch, and prints every step's losses, communication and
// memory (peak and current bytes per rank of parameters, gradients, optimizer state and activations). The
// same program runs simulated or across processes:
//
//   ./llama                                                  simulated world of 4 ranks
//   TESSERA_RANKS_PER_PROCESS=2 mpirun -np 2 ./llama         2 processes x 2 ranks
//   TESSERA_RANKS_PER_PROCESS=1 mpirun -np 4 ./llama         4 processes x 1 rank
//                               (add --allow-run-as-root --oversubscribe in a root container)
//
// Each ends with `final parameters checksum <hex>`, a hash of every parameter's bytes in name
// order: the runs print the same one, bit for bit.
//
// Checkpoints (ts::dcp): `--save DIR --save-every N` saves both models, both optimizers and the
// step into DIR/step-<s> every N steps; `--resume DIR/step-<s>` continues from there, on the mesh
// `--mesh DPxTP` (2x2 by default, or 4x1: tp must divide the 2 kv heads): the checkpoint is
// resharded on load, and the losses continue those of a run that never stopped.
//
//   ./llama --save ckpt --save-every 5                     steps 1-10, saving after 5 and 10
//   ./llama --resume ckpt/step-5 --mesh 4x1                steps 6-10 on 4 dp replicas
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "tessera/tessera.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;

namespace {

constexpr int64_t kVocab = 256, kSeq = 32, kBatchPerReplica = 2, kSteps = 10;

ts::models::TransformerArgs model_args() {
  ts::models::TransformerArgs args;
  args.dim = 64;
  args.n_layers = 2;
  args.n_heads = 4;
  args.n_kv_heads = 2;
  args.vocab_size = kVocab;
  args.ffn_hidden = 176;
  args.max_seq_len = kSeq;
  return args;
}

// Step s's global batch [2 * kBatchPerReplica, kSeq + 1] of tokens (inputs and next-token targets),
// from a fixed linear congruential sequence: the same on every process.
std::vector<int64_t> batch_tokens(int64_t step) {
  std::vector<int64_t> tokens(static_cast<size_t>(2 * kBatchPerReplica * (kSeq + 1)));
  uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(step + 1);
  for (int64_t& t : tokens) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t = static_cast<int64_t>((state >> 33) % kVocab);
  }
  return tokens;
}

uint64_t fnv1a(uint64_t hash, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

struct Options {
  int64_t dp = 2, tp = 2;
  std::string save_dir, resume_from;
  int64_t save_every = 0;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw ts::Error("" + arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--mesh") {
      long long dp = 0, tp = 0;
      char extra = 0;
      if (std::sscanf(value.c_str(), "%lldx%lld%c", &dp, &tp, &extra) != 2 || dp < 1 || tp < 1 ||
          dp * tp != 4)
        throw ts::Error("--mesh '" + value + "' is not DPxTP with DP * TP = 4 (2x2, 4x1)");
      if (model_args().n_kv_heads % tp != 0)
        throw ts::Error("--mesh '" + value + "': tensor parallelism over " + std::to_string(tp) +
                        " ranks would split the model's " + std::to_string(model_args().n_kv_heads) +
                        " kv heads unevenly; tp must divide them (2x2, 4x1)");
      o.dp = dp;
      o.tp = tp;
    } else if (arg == "--save") {
      o.save_dir = value;
    } else if (arg == "--save-every") {
      long long every = 0;
      char extra = 0;
      if (std::sscanf(value.c_str(), "%lld%c", &every, &extra) != 1 || every < 1)
        throw ts::Error("--save-every '" + value + "' must be a positive number of steps");
      o.save_every = every;
    } else if (arg == "--resume") {
      o.resume_from = value;
    } else {
      throw ts::Error("unknown option '" + arg + "'; expected --mesh, --save, --save-every or --resume");
    }
  }
  if (!o.save_dir.empty() && o.save_every == 0) throw ts::Error("--save needs --save-every N");
  return o;
}

// Everything a step depends on: both models, both optimizers (with their lr) and the step reached.
// The entries share the modules' and optimizers' bytes, so a load into them restores the training.
ts::dcp::StateDict training_state(const ts::models::Transformer& dense, const ts::models::Transformer& model,
                                  ts::optim::Optimizer& dense_optimizer, ts::optim::Optimizer& optimizer,
                                  int64_t step) {
  ts::dcp::StateDict state;
  const auto add = [&](const std::string& prefix, const ts::dcp::StateDict& part) {
    for (const auto& [key, value] : part) state.emplace(prefix + key, value);
  };
  add("model.", ts::get_model_state_dict(*model));
  add("optim.", ts::get_optimizer_state_dict(*model, optimizer));
  add("dense.model.", ts::get_model_state_dict(*dense));
  add("dense.optim.", ts::get_optimizer_state_dict(*dense, dense_optimizer));
  state.emplace("step", step);
  return state;
}

// The optimizer part of a loaded state, without its prefix.
ts::dcp::StateDict part_of(const ts::dcp::StateDict& state, const std::string& prefix) {
  ts::dcp::StateDict part;
  for (const auto& [key, value] : state)
    if (key.compare(0, prefix.size(), prefix) == 0) part.emplace(key.substr(prefix.size()), value);
  return part;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse_options(argc, argv);
    const ts::World world = ts::init_world();
    const ts::World ranks = world.num_processes() > 1 ? world : ts::World(4);
    if (ranks.size() != 4) {
      std::fprintf(stderr, "llama needs a world of 4 ranks (processes x TESSERA_RANKS_PER_PROCESS), got %d\n",
                   ranks.size());
      return 1;
    }
    const bool printer = world.process_index() == 0;
    ts::LocalMode mode(ranks);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {options.dp, options.tp}, {"dp", "tp"});

    // The dense model and the parallel one start from the same parameters. (Named one by one: a
    // lambda below uses `model`, and clang 14 cannot capture a structured binding.)
    auto models = [] {
      ts::DisabledLocalMode plain;
      ts::manual_seed(2026);
      ts::models::Transformer d(model_args());
      ts::manual_seed(2026);
      ts::models::Transformer m(model_args());
      return std::pair{d, m};
    }();
    ts::models::Transformer dense = models.first, model = models.second;  // holders: both share the modules
    // What each rank holds, by category, from the moment the parameters are laid out: the dense
    // model's plain tensors are not the ranks' and are not counted.
    ts::MemoryCounter memory;
    // torchtitan's plan (ts::transformer_tp_plan spells it out: docs/user-guide.md, "Modules").
    ts::parallelize_module(model, mesh["tp"], ts::transformer_tp_plan(/*loss_parallel=*/true));
    for (const auto& layer : *model->layers) ts::fully_shard(*layer, {.mesh = mesh["dp"]});
    ts::fully_shard(model, {.mesh = mesh["dp"]});

    ts::optim::AdamW dense_optimizer(dense->parameters(), {.lr = 3e-3});
    ts::optim::AdamW optimizer(model->parameters(), {.lr = 3e-3});
    ts::optim::lr_scheduler::LinearLR dense_warmup(dense_optimizer, {.start_factor = 0.25, .total_iters = 4});
    ts::optim::lr_scheduler::LinearLR warmup(optimizer, {.start_factor = 0.25, .total_iters = 4});

    int64_t first_step = 0;
    if (!options.resume_from.empty()) {
      // The schedulers replay their steps (their lr is recursive), then the saved lr and moments
      // are put back; the models' parameters load in place, resharded to this run's mesh.
      ts::dcp::StateDict state = training_state(dense, model, dense_optimizer, optimizer, 0);
      ts::dcp::load(state, options.resume_from);
      first_step = std::get<int64_t>(state.at("step"));
      for (int64_t s = 0; s < first_step; ++s) {
        dense_warmup.step();
        warmup.step();
      }
      ts::set_optimizer_state_dict(*dense, dense_optimizer, part_of(state, "dense.optim."));
      ts::set_optimizer_state_dict(*model, optimizer, part_of(state, "optim."));
      if (printer)
        std::printf("resumed after step %lld from %s on a (dp=%lld, tp=%lld) mesh\n",
                    static_cast<long long>(first_step), options.resume_from.c_str(),
                    static_cast<long long>(options.dp), static_cast<long long>(options.tp));
    }

    bool all_close = true;
    for (int64_t step = first_step; step < kSteps; ++step) {
      const ts::Tensor batch = [&] {
        ts::DisabledLocalMode plain;
        return ts::from_values(batch_tokens(step), {2 * kBatchPerReplica, kSeq + 1});
      }();
      const ts::Tensor inputs = batch.narrow(1, 0, kSeq).contiguous();
      const ts::Tensor targets = batch.narrow(1, 1, kSeq).contiguous();

      double dense_loss = 0;
      {
        ts::DisabledLocalMode plain;
        dense_optimizer.zero_grad();
        const ts::Tensor loss =
            ts::cross_entropy(dense(inputs).tensor().view({-1, kVocab}), targets.view({-1}));
        loss.backward();
        ts::nn::utils::clip_grad_norm_(dense->parameters(), 1.0);
        dense_optimizer.step();
        dense_warmup.step();
        dense_loss = loss.item<double>();
      }

      // The step's communication and memory: forward, backward, clipping and the optimizer.
      memory.reset_peak();
      ts::CommCounter comm;
      optimizer.zero_grad();
      // Each dp replica trains on its rows of the batch; both tp ranks of a replica see them.
      const ts::Tensor my_inputs =
          ts::distribute_tensor(inputs, mesh, {ts::Shard(0), ts::Replicate()}).to_local();
      const ts::Tensor my_targets =
          ts::distribute_tensor(targets, mesh, {ts::Shard(0), ts::Replicate()}).to_local();
      const ts::DTensor loss = [&] {
        const ts::LossParallel loss_parallel;
        const ts::DTensor logits = model(my_inputs).dtensor();
        const ts::DTensor target = ts::from_local(my_targets, mesh["tp"], {ts::Replicate()});
        ts::DTensor l = ts::cross_entropy(logits.view({-1, kVocab}), target.view({-1}));
        l.backward();
        return l;
      }();
      ts::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
      warmup.step();
      const std::string comm_table = comm.table();
      const std::string memory_table = memory.table();

      // The replicas' losses averaged: the loss of the whole batch (equal token counts).
      ts::Tensor replica_loss = loss.to_local().detach().clone();
      ts::dist::all_reduce(replica_loss, ts::ReduceOp::AVG, mesh["dp"].group(0));
      const double parallel_loss = replica_loss.item<double>();
      const double error = std::abs(parallel_loss - dense_loss) / std::abs(dense_loss);
      all_close = all_close && error <= 1e-5;
      if (printer) {
        std::printf("step %2lld  loss %.7f  dense %.7f  relative difference %.2e\n",
                    static_cast<long long>(step + 1), parallel_loss, dense_loss, error);
        std::printf("%s%s\n", comm_table.c_str(), memory_table.c_str());
      }
      if (options.save_every > 0 && (step + 1) % options.save_every == 0) {
        const std::string dir = options.save_dir + "/step-" + std::to_string(step + 1);
        ts::dcp::save(training_state(dense, model, dense_optimizer, optimizer, step + 1), dir);
        if (printer)
          std::printf("saved after step %lld to %s\n", static_cast<long long>(step + 1), dir.c_str());
      }
    }

    uint64_t checksum = 14695981039346656037ull;
    for (const auto& [name, p] : model->named_parameters()) {
      const std::vector<float> values = p.dtensor().full_tensor().reconcile().to_vector<float>();
      checksum = fnv1a(checksum, name.data(), name.size());
      checksum = fnv1a(checksum, values.data(), values.size() * sizeof(float));
    }
    if (printer) {
      std::printf("losses %s the dense run within 1e-5 relative\n", all_close ? "match" : "DO NOT match");
      std::printf("final parameters checksum %016" PRIx64 "\n", checksum);
    }
    return all_close ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llama: %s\n", e.what());
    return 1;
  }
}
