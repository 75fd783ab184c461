// One training step of ts::models::Transformer laid out by a strategy:
//
//   megatron  (1-d mesh, tp) torchtitan's tensor-parallel plan for its Llama, with sequence
//             parallelism and loss parallelism; every rank sees the whole batch.
//   fsdp      (1-d mesh, dp) fully_shard on every block, then on the root; the batch is split.
//   dp        (1-d mesh, dp) replicate (DDP) on the root; the batch is split.
//   fsdp+tp   (2-d mesh, dp x tp) the tensor-parallel plan on tp, then fully_shard on every block
//             and the root on dp, as torchtitan composes them; the batch is split over dp.
//
// Nothing here decides a collective: the styles, FSDP, DDP and sharding propagation do, exactly as
// in a training program, and CommCounters record what they issue.
#include "transformer_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "commands.hpp"

namespace tessera::cli {

namespace {

// Which mesh dims the strategy uses for what.
struct ParallelDims {
  std::optional<std::string> dp;  // data parallel: the batch is split, FSDP or DDP run here
  std::optional<std::string> tp;  // tensor parallel
};

ParallelDims parallel_dims_of(const ModelPlan& plan) {
  switch (plan.strategy) {
    case Strategy::Megatron:
      return {std::nullopt, plan.names.at(0)};
    case Strategy::Fsdp:
    case Strategy::Dp:
      return {plan.names.at(0), std::nullopt};
    case Strategy::FsdpTp:
      return {plan.names.at(0), plan.names.at(1)};
  }
  return {};
}

std::string strategy_text(const ModelPlan& plan, const ParallelDims& roles) {
  switch (plan.strategy) {
    case Strategy::Megatron:
      return fmt::format(
          "megatron: tensor-parallel plan (sequence parallel, loss parallel) on {}; every rank "
          "takes the whole batch",
          *roles.tp);
    case Strategy::Fsdp:
      return fmt::format("fsdp: fully_shard on every layer and the root over {}; the batch split over {}",
                         *roles.dp, *roles.dp);
    case Strategy::Dp:
      return fmt::format("dp: replicate (DDP) over {}; the batch split over {}", *roles.dp, *roles.dp);
    case Strategy::FsdpTp:
      return fmt::format(
          "fsdp+tp: tensor-parallel plan (sequence parallel, loss parallel) on {}, then fully_shard "
          "on every layer and the root over {}; the batch split over {}",
          *roles.tp, *roles.dp, *roles.dp);
  }
  return "?";
}

models::TransformerArgs model_args(const ModelPlan& plan) {
  models::TransformerArgs args;
  args.dim = plan.hidden;
  args.n_layers = plan.layers;
  args.n_heads = plan.heads;
  args.n_kv_heads = plan.kv_heads;
  args.vocab_size = plan.vocab;
  args.ffn_hidden = plan.ffn;
  args.max_seq_len = plan.seq;
  args.dtype = plan.dtype;
  args.backend = plan.backend;
  return args;
}

// Lays the model out over the mesh as the strategy says, in the order a training program does.
void parallelize(models::Transformer& model, const DeviceMesh& mesh, const ParallelDims& roles,
                 Strategy strategy) {
  if (roles.tp) parallelize_module(model, mesh[*roles.tp], transformer_tp_plan());
  if (strategy == Strategy::Dp) {
    replicate(model, {.mesh = mesh[*roles.dp]});
  } else if (roles.dp) {
    for (const auto& layer : *model->layers) fully_shard(*layer, {.mesh = mesh[*roles.dp]});
    fully_shard(model, {.mesh = mesh[*roles.dp]});
  }
}

// What one rank feeds the model: its rows of the global batch of tokens (all of them without data
// parallelism). Inputs and targets have the same shape, so one tensor serves as both.
Tensor rank_tokens(const ModelPlan& plan, const DeviceMesh& mesh, const ParallelDims& roles) {
  Tensor global;
  {
    const auto plain = maybe_disable_local_mode();
    global = zeros({plan.batch, plan.seq}, TensorOptions(kInt64).backend(plan.backend));
  }
  Placements placements;
  for (const std::string& name : plan.names)
    placements.push_back(roles.dp == name ? Placement(Shard(0)) : Placement(Replicate()));
  return distribute_tensor(global, mesh, placements).to_local();
}

struct Step {
  std::vector<CommCounter::Entry> forward, backward;  // forward includes the loss
  std::vector<CommCounter::Entry> optimizer;          // the gradients' pending reductions
  std::vector<CommCounter::Implicit> implicit;
  int64_t activation_bytes = 0;  // held after the forward (counted only when asked)
};

// What optimizer.step communicates before it updates anything: a DTensor gradient still Partial
// where its parameter is not (a sequence-parallel norm's weight under tensor parallelism alone) is
// reduced to the parameter's layout, one parameter at a time, as the optimizers do.
void reduce_pending_gradients(const models::Transformer& model) {
  const NoGradGuard off;
  for (const auto& [name, p] : model->named_parameters()) {
    if (!p.is_dtensor() || !p.dtensor().has_grad()) continue;
    const DTensor grad = p.dtensor().grad();
    if (grad.placements() != p.dtensor().placements()) grad.redistribute(p.dtensor().placements());
  }
}

Step run_step(models::Transformer& model, const Tensor& tokens, const DeviceMesh& mesh,
              const ParallelDims& roles, int64_t vocab, bool count_activations) {
  Step step;
  std::optional<DTensor> dloss;
  std::optional<Tensor> loss;
  {
    // Counting memory makes the meta backend keep every rank's shard apart: only when asked.
    std::optional<MemoryCounter> memory;
    if (count_activations) memory.emplace();
    const CommCounter counter;
    const nn::Value logits = model(tokens);
    if (roles.tp) {
      // Loss parallel: the logits stay sharded on the vocabulary; the targets are replicated on tp.
      const LossParallel loss_parallel;
      const DTensor target = from_local(tokens, mesh[*roles.tp], {Replicate()});
      dloss = cross_entropy(logits.dtensor().view({-1, vocab}), target.view({-1}));
    } else {
      loss = cross_entropy(logits.tensor().view({-1, vocab}), tokens.view({-1}));
    }
    step.forward = counter.entries();
    step.implicit = counter.implicit_redistributions();
    if (memory) step.activation_bytes = memory->current_bytes("activations");
  }
  {
    const CommCounter counter;
    if (dloss) {
      const LossParallel loss_parallel;
      dloss->backward();
    } else {
      loss->backward();
    }
    step.backward = counter.entries();
    for (const CommCounter::Implicit& i : counter.implicit_redistributions()) step.implicit.push_back(i);
  }
  const CommCounter optimizer;
  reduce_pending_gradients(model);
  step.optimizer = optimizer.entries();
  return step;
}

int64_t parameter_count(const models::Transformer& model) {
  int64_t count = 0;
  for (const auto& [name, p] : model->named_parameters()) count += p.tensor().numel();
  return count;
}

std::string thousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void print_model(const ModelPlan& plan, const ParallelDims& roles, int64_t parameters) {
  std::cout
      << fmt::format(
             "model       transformer: {} layer(s), dim {}, {} heads ({} kv), ffn {}, vocab {}, batch {} "
             "x seq {} = {} tokens, {}\n",
             plan.layers, plan.hidden, plan.heads, plan.kv_heads, plan.ffn, plan.vocab, plan.batch, plan.seq,
             plan.batch * plan.seq, dtype_name(plan.dtype))
      << fmt::format("parameters  {} ({})\n", thousands(parameters),
                     bytes_text(parameters * static_cast<int64_t>(itemsize(plan.dtype))))
      << fmt::format("mesh        [{}] ({} ranks; dims {})\n", fmt::join(plan.mesh_shape, ", "), plan.world,
                     fmt::join(plan.names, ", "))
      << fmt::format("placements  {}\n", strategy_text(plan, roles))
      << fmt::format("backend     {}\n", plan.backend)
      << fmt::format("topology    {}\n", default_topology(static_cast<int>(plan.world)).name());
}

// Rows ordered by mesh dim, then collective, so that each dim's communication reads together.
std::vector<CommCounter::Entry> by_mesh_dim(std::vector<CommCounter::Entry> entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::tie(a.mesh_dim, a.collective, a.algorithm) < std::tie(b.mesh_dim, b.collective, b.algorithm);
  });
  return entries;
}

void print_step(const Step& step) {
  std::cout << fmt::format("\n{:<9}  {:<14}  {:<8}  {:<9}  {:>5}  {:>12}  {:>12}\n", "phase", "collective",
                           "mesh dim", "algorithm", "calls", "bytes/rank", "est. time");
  struct Total {
    int64_t calls = 0, bytes = 0;
    double seconds = 0;
  };
  std::map<std::string, Total> per_dim;
  Total all;
  for (const auto& [phase, entries] :
       {std::pair{"forward", &step.forward}, {"backward", &step.backward}, {"optimizer", &step.optimizer}}) {
    if (entries->empty()) std::cout << fmt::format("{:<9}  (none)\n", phase);
    for (const CommCounter::Entry& e : by_mesh_dim(*entries)) {
      std::cout << fmt::format("{:<9}  {:<14}  {:<8}  {:<9}  {:>5}  {:>12}  {:>9.3f} ms\n", phase,
                               e.collective, e.mesh_dim, e.algorithm, e.calls, bytes_text(e.bytes_per_rank),
                               e.seconds * 1e3);
      for (Total* t : {&per_dim[e.mesh_dim], &all}) {
        t->calls += e.calls;
        t->bytes += e.bytes_per_rank;
        t->seconds += e.seconds;
      }
    }
  }
  for (const CommCounter::Implicit& i : step.implicit)
    std::cout << fmt::format("implicit: {} input {} {} -> {}\n", i.op, i.input, i.from, i.to);
  std::cout << fmt::format("\n{:<8}  {:>5}  {:>12}  {:>12}\n", "mesh dim", "calls", "bytes/rank",
                           "est. time");
  for (const auto& [dim, t] : per_dim)
    std::cout << fmt::format("{:<8}  {:>5}  {:>12}  {:>9.3f} ms\n", dim, t.calls, bytes_text(t.bytes),
                             t.seconds * 1e3);
  std::cout << fmt::format(
      "\nstep: {} collective call(s), {} per rank communicated, estimated communication time "
      "{:.3f} ms\n",
      all.calls, bytes_text(all.bytes), all.seconds * 1e3);
}

double seconds_of(const std::vector<CommCounter::Entry>& entries) {
  double seconds = 0;
  for (const CommCounter::Entry& e : entries) seconds += e.seconds;
  return seconds;
}

}  // namespace

int plan_transformer(const ModelPlan& plan, TransformerStepCost* cost) {
  const ScopedTopology topology(plan.topology);

  const ParallelDims roles = parallel_dims_of(plan);
  LocalMode mode(static_cast<int>(plan.world));
  const DeviceMesh mesh = init_device_mesh(plan.backend, plan.mesh_shape, plan.names);
  // The model is made as a program makes it: once, outside the ranks, then laid out over them.
  models::Transformer model = [&] {
    const auto plain = maybe_disable_local_mode();
    return models::Transformer(model_args(plan));
  }();
  const int64_t parameters = parameter_count(model);
  parallelize(model, mesh, roles, plan.strategy);
  const Tensor tokens = rank_tokens(plan, mesh, roles);

  std::unique_ptr<TraceScope> trace;
  if (!plan.trace.empty()) trace = std::make_unique<TraceScope>(plan.trace);
  const Step step = run_step(model, tokens, mesh, roles, plan.vocab, cost != nullptr);
  if (trace) trace->close();
  if (cost != nullptr)
    *cost = {seconds_of(step.forward), seconds_of(step.backward), seconds_of(step.optimizer),
             step.activation_bytes};

  print_model(plan, roles, parameters);
  print_step(step);
  if (!plan.trace.empty()) std::cout << fmt::format("trace written to {}\n", plan.trace);
  return 0;
}

}  // namespace tessera::cli
