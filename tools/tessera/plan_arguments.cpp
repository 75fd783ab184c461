#include "plan_arguments.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "commands.hpp"

namespace tessera::cli {
namespace {

const char* const kCommand = "tessera plan";

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end; (end = text.find(separator, start)) != std::string::npos; start = end + 1)
    parts.push_back(text.substr(start, end - start));
  parts.push_back(text.substr(start));
  return parts;
}

// "4x2" -> {4, 2}. Sizes are checked here, before anything is allocated.
std::vector<int64_t> parse_sizes(const std::string& option, const std::string& text, int64_t minimum) {
  std::vector<int64_t> sizes;
  const auto bad = [&](const std::string& why) {
    return UsageError(
        kCommand, fmt::format("{} '{}': {}; expected sizes separated by 'x', e.g. 4x2", option, text, why));
  };
  for (const std::string& part : split(text, 'x')) {
    // At most 12 digits, so the value fits an int64_t before any arithmetic on it.
    if (part.empty() || part.size() > 12 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw bad(fmt::format("'{}' is not a size", part));
    const int64_t size = std::stoll(part);
    if (size < minimum) throw bad(fmt::format("sizes must be at least {}", minimum));
    sizes.push_back(size);
  }
  return sizes;
}

DType parse_dtype(const std::string& text) {
  for (DType d : {kFloat32, kFloat64, kInt32, kInt64, kBFloat16, kFloat16, kInt8, kUInt8})
    if (dtype_name(d) == text) return d;
  throw UsageError(
      kCommand,
      fmt::format("--dtype '{}': expected float32, float64, int32, int64, bfloat16, float16, int8 or uint8",
                  text));
}

// Placement text checked against the mesh and shape, so mistakes are named in the user's terms.
Placements parse_for(const std::string& option, const std::string& text, size_t mesh_dims,
                     size_t tensor_dims) {
  Placements placements;
  try {
    placements = parse_placements(text);
  } catch (const Error& e) {
    throw UsageError(kCommand, fmt::format("{} '{}': {}", option, text, e.what()));
  }
  if (placements.size() != mesh_dims)
    throw UsageError(kCommand,
                     fmt::format("{} '{}' gives {} placement(s) but the mesh has {} dim(s); give one per "
                                 "mesh dim",
                                 option, text, placements.size(), mesh_dims));
  for (const Placement& p : placements) {
    const auto n = static_cast<int64_t>(tensor_dims);
    if (p.is_shard() && (p.dim() < -n || p.dim() >= n))
      throw UsageError(kCommand, fmt::format("{} '{}': {} shards tensor dim {} but the shape has {} dim(s)",
                                             option, text, p.to_string(), p.dim(), n));
  }
  return placements;
}

}  // namespace

void add_plan_options(CLI::App& sub, PlanOptions& options) {
  sub.add_option("--mesh", options.mesh, "Mesh shape, e.g. 4x2")->required()->type_name("SHAPE");
  sub.add_option("--shape", options.shape, "Global tensor shape, e.g. 1024x1024 (not with --model)")
      ->type_name("SHAPE");
  sub.add_option("--from", options.from, "Placements now, one per mesh dim, e.g. \"S(0),R\" (S, B, R, P(op))")
      ->type_name("PLACEMENTS");
  sub.add_option("--to", options.to, "Placements wanted, e.g. \"R,S(1)\"")->type_name("PLACEMENTS");
  sub.add_option("--topology", options.topology,
                 "Topology preset: fully_connected, ring, torus:RxC or nodes:K (default: the configured one)")
      ->type_name("PRESET");
  sub.add_option("--dtype", options.dtype,
                 "Element type: float32, float64, int32, int64, bfloat16, float16, int8 or uint8")
      ->type_name("DTYPE")
      ->capture_default_str();
  sub.add_option("--names", options.names, "Mesh dim names, e.g. dp,tp")->type_name("NAMES");
  // The model form: one training step of a model instead of one redistribution.
  sub.add_option("--model", options.model,
                 "Plan one training step of a model: mlp, transformer-block or transformer (the reference "
                 "Llama-style model)")
      ->type_name("MODEL");
  sub.add_option("--layers", options.layers, "Model: number of layers (default 1)")->type_name("N");
  sub.add_option("--hidden", options.hidden,
                 "Model: hidden size, the transformer's dim (required with --model)")
      ->type_name("N");
  sub.add_option(
         "--ffn", options.ffn,
         "Model: the MLP's inner width (default 4 x hidden; transformer: Llama's, 2/3 x 4 x hidden rounded "
         "up to a multiple of 256)")
      ->type_name("N");
  sub.add_option("--heads", options.heads, "Model: attention heads of a transformer(-block) (default 1)")
      ->type_name("N");
  sub.add_option("--kv-heads", options.kv_heads, "Model: transformer key/value heads (default --heads)")
      ->type_name("N");
  sub.add_option("--vocab", options.vocab, "Model: transformer vocabulary size (default 32000)")
      ->type_name("N");
  sub.add_option("--seq", options.seq, "Model: sequence length (default 1)")->type_name("N");
  sub.add_option("--batch", options.batch, "Model: global batch size, in sequences (required with --model)")
      ->type_name("N");
  sub.add_option(
         "--placements", options.placements,
         "Model: megatron (default on a 1-d mesh), fsdp, dp, or fsdp+tp (transformer on a 2-d mesh, its "
         "default there)")
      ->type_name("STRATEGY");
  sub.add_option("--backend", options.backend,
                 "Model: the backend to plan on (default meta: nothing is allocated)")
      ->type_name("NAME");
  sub.add_option("--trace", options.trace,
                 "Model: write the step's schedule trace to this file (with --pp: the pipeline's timeline)")
      ->type_name("FILE");
  sub.add_option("--pp", options.pp,
                 "Transformer: pipeline-parallel stage ranks; --mesh is then one stage's mesh (default 1: no "
                 "pipeline)")
      ->type_name("N");
  sub.add_option("--schedule", options.schedule,
                 "Transformer with --pp: gpipe, 1f1b (default), interleaved-1f1b, interleaved-zb or zbv (or "
                 "PyTorch's class names, e.g. Schedule1F1B)")
      ->type_name("NAME");
  sub.add_option("--microbatches", options.microbatches,
                 "Transformer with --pp: micro-batches per step (default --pp)")
      ->type_name("N");
  sub.add_option("--stages-per-rank", options.stages_per_rank,
                 "Transformer with --pp: stages each rank holds (interleaved and zbv: default 2; others 1)")
      ->type_name("N");
  sub.add_option(
         "--tflops", options.tflops,
         "Transformer with --pp: TFLOP/s one rank sustains, for the stages' compute time (default 100)")
      ->type_name("X");
}

PlanRequest check_plan(const PlanOptions& options) {
  const std::pair<const char*, bool> model_only[] = {{"--layers", options.layers != 0},
                                                     {"--hidden", options.hidden != 0},
                                                     {"--ffn", options.ffn != 0},
                                                     {"--heads", options.heads != 0},
                                                     {"--kv-heads", options.kv_heads != 0},
                                                     {"--vocab", options.vocab != 0},
                                                     {"--seq", options.seq != 0},
                                                     {"--batch", options.batch != 0},
                                                     {"--placements", !options.placements.empty()},
                                                     {"--backend", !options.backend.empty()},
                                                     {"--trace", !options.trace.empty()},
                                                     {"--pp", options.pp != 0},
                                                     {"--schedule", !options.schedule.empty()},
                                                     {"--microbatches", options.microbatches != 0},
                                                     {"--stages-per-rank", options.stages_per_rank != 0},
                                                     {"--tflops", options.tflops != 0}};
  for (const auto& [option, given] : model_only)
    if (given) throw UsageError(kCommand, fmt::format("{} plans a model: it needs --model", option));
  for (const auto& [option, value] :
       {std::pair{"--shape", &options.shape}, {"--from", &options.from}, {"--to", &options.to}})
    if (value->empty()) throw UsageError(kCommand, fmt::format("{} is required", option));
  PlanRequest request;
  request.mesh_shape = parse_sizes("--mesh", options.mesh, 1);
  request.shape = parse_sizes("--shape", options.shape, 0);
  request.dtype = parse_dtype(options.dtype);
  if (!options.names.empty()) request.names = split(options.names, ',');
  if (!request.names.empty() && request.names.size() != request.mesh_shape.size())
    throw UsageError(kCommand, fmt::format("--names '{}' gives {} name(s) but the mesh has {} dim(s)",
                                           options.names, request.names.size(), request.mesh_shape.size()));

  for (int64_t size : request.mesh_shape)
    if ((request.world *= size) > kPlanMaxRanks)
      throw UsageError(kCommand, fmt::format("--mesh '{}': more than {} ranks", options.mesh, kPlanMaxRanks));
  // Bounded before anything is allocated: every step keeps (ranks + 1) x bytes within the limit.
  const int64_t budget = kPlanMaxMemory / (request.world + 1);
  request.bytes = static_cast<int64_t>(itemsize(request.dtype));
  for (int64_t size : request.shape) {
    if (size != 0 && request.bytes > budget / size)
      throw UsageError(kCommand,
                       fmt::format("--shape '{}': too large to simulate on {} ranks: every rank may hold "
                                   "a copy, and (ranks + 1) x the tensor must stay within {} GiB",
                                   options.shape, request.world, kPlanMaxMemory >> 30));
    request.bytes *= size;
  }

  request.from = parse_for("--from", options.from, request.mesh_shape.size(), request.shape.size());
  request.to = parse_for("--to", options.to, request.mesh_shape.size(), request.shape.size());
  request.topology = options.topology;
  if (!request.topology.empty()) {
    // Checked against this world: set_default_topology alone only checks the preset's form.
    try {
      Topology::preset(request.topology, static_cast<int>(request.world));
    } catch (const Error& e) {
      throw UsageError(kCommand, fmt::format("--topology: {}", e.what()));
    }
  }
  return request;
}

namespace {

// a x b, or a UsageError saying what does not fit.
int64_t product(int64_t a, int64_t b, const std::string& what) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    throw UsageError(kCommand, fmt::format("{} ({} x {}) does not fit a 64-bit size", what, a, b));
  return out;
}

int64_t positive(const char* option, int64_t value, int64_t fallback) {
  if (value == 0) return fallback;
  if (value < 0)
    throw UsageError(kCommand, fmt::format("{} {}: expected a size of at least 1", option, value));
  return value;
}

}  // namespace

namespace {

// Llama's feed-forward width for a model dimension: two thirds of 4 x dim, rounded up to a
// multiple of 256 (11008 for dim 4096); 0 when that does not fit an int64_t.
int64_t llama_ffn_hidden(int64_t dim) {
  constexpr int64_t kMultipleOf = 256;
  if (dim > (std::numeric_limits<int64_t>::max() - 3 * kMultipleOf) / 8) return 0;
  const int64_t two_thirds = 2 * (4 * dim) / 3;
  return (two_thirds + kMultipleOf - 1) / kMultipleOf * kMultipleOf;
}

ModelKind parse_model(const std::string& text) {
  if (text == "mlp") return ModelKind::Mlp;
  if (text == "transformer-block") return ModelKind::TransformerBlock;
  if (text == "transformer") return ModelKind::Transformer;
  throw UsageError(kCommand,
                   fmt::format("--model '{}': expected mlp, transformer-block or transformer", text));
}

// The strategy given, or the model's default for the mesh: fsdp+tp for a transformer on a 2-d mesh,
// megatron otherwise. Only the transformer has a plan for FSDP and tensor parallelism together.
Strategy parse_strategy(const PlanOptions& options, ModelKind model, size_t mesh_dims) {
  const bool two_d_transformer = model == ModelKind::Transformer && mesh_dims == 2;
  const std::string text = !options.placements.empty() ? options.placements
                           : two_d_transformer         ? "fsdp+tp"
                                                       : "megatron";
  Strategy strategy;
  if (text == "megatron")
    strategy = Strategy::Megatron;
  else if (text == "fsdp")
    strategy = Strategy::Fsdp;
  else if (text == "dp")
    strategy = Strategy::Dp;
  else if (text == "fsdp+tp")
    strategy = Strategy::FsdpTp;
  else
    throw UsageError(kCommand,
                     fmt::format("--placements '{}': expected megatron, fsdp, dp or fsdp+tp", text));
  if (strategy == Strategy::FsdpTp && !two_d_transformer)
    throw UsageError(kCommand,
                     fmt::format("--placements 'fsdp+tp' is for --model transformer on a 2-d mesh (dp x "
                                 "tp); got --model {} on --mesh '{}'",
                                 options.model, options.mesh));
  if (two_d_transformer && strategy != Strategy::FsdpTp)
    throw UsageError(kCommand,
                     fmt::format("--placements '{}': a transformer on a 2-d mesh ('{}') is planned with "
                                 "fsdp+tp; expected fsdp+tp, or a 1-d mesh for megatron, fsdp or dp",
                                 text, options.mesh));
  return strategy;
}

// The transformer's own options and what ts::models::Transformer and its parallel plan need of
// them, checked here so that a mistake is named as the option the user gave.
void check_transformer(const PlanOptions& options, ModelPlan& plan) {
  plan.kv_heads = positive("--kv-heads", options.kv_heads, plan.heads);
  plan.vocab = positive("--vocab", options.vocab, 32000);
  if (options.ffn == 0) {
    plan.ffn = llama_ffn_hidden(plan.hidden);
    if (plan.ffn == 0)
      throw UsageError(kCommand,
                       fmt::format("--hidden {}: the default --ffn (Llama's, 2/3 x 4 x hidden) does not fit "
                                   "a 64-bit size",
                                   plan.hidden));
  }
  if ((plan.hidden / plan.heads) % 2 != 0)
    throw UsageError(kCommand,
                     fmt::format("--hidden {} / --heads {} = {}: rotary embeddings need an even head width",
                                 plan.hidden, plan.heads, plan.hidden / plan.heads));
  if (plan.heads % plan.kv_heads != 0)
    throw UsageError(kCommand,
                     fmt::format("--kv-heads {} does not divide --heads {}: each key/value head serves the "
                                 "same number of query heads",
                                 plan.kv_heads, plan.heads));
  const bool tensor_parallel = plan.strategy == Strategy::Megatron || plan.strategy == Strategy::FsdpTp;
  const bool data_parallel = plan.strategy != Strategy::Megatron;
  if (tensor_parallel) {
    const int64_t tp = plan.mesh_shape.back();
    // Column-parallel wq, wk and wv give each rank whole heads, and sequence parallelism whole
    // positions.
    for (const auto& [option, value] :
         {std::pair{"--heads", plan.heads}, {"--kv-heads", plan.kv_heads}, {"--seq", plan.seq}})
      if (value % tp != 0)
        throw UsageError(kCommand,
                         fmt::format("{} {}: the tensor-parallel dim {} has {} ranks; expected a multiple "
                                     "of {}",
                                     option, value, plan.names.back(), tp, tp));
  }
  if (data_parallel) {
    const int64_t dp = plan.mesh_shape.front();
    if (plan.batch % dp != 0)
      throw UsageError(kCommand,
                       fmt::format("--batch {}: the data-parallel dim {} has {} ranks; expected a multiple "
                                   "of {} (each replica takes an equal part of the batch)",
                                   plan.batch, plan.names.front(), dp, dp));
  }
}

// The schedule's normalised name for a --schedule text: ours, or PyTorch's class name.
std::string parse_schedule(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::pair<const char*, const char*> names[] = {{"gpipe", "gpipe"},
                                                       {"schedulegpipe", "gpipe"},
                                                       {"1f1b", "1f1b"},
                                                       {"schedule1f1b", "1f1b"},
                                                       {"interleaved-1f1b", "interleaved-1f1b"},
                                                       {"scheduleinterleaved1f1b", "interleaved-1f1b"},
                                                       {"interleaved-zb", "interleaved-zb"},
                                                       {"scheduleinterleavedzerobubble", "interleaved-zb"},
                                                       {"zbv", "zbv"},
                                                       {"schedulezbvzerobubble", "zbv"}};
  for (const auto& [given, name] : names)
    if (lower == given) return name;
  throw UsageError(kCommand,
                   fmt::format("--schedule '{}': expected gpipe, 1f1b, interleaved-1f1b, interleaved-zb or "
                               "zbv (or ScheduleGPipe, Schedule1F1B, ScheduleInterleaved1F1B, "
                               "ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble)",
                               text));
}

// --pp and its options: every stage the same number of layers, every micro-batch the same rows.
void check_pipeline(const PlanOptions& options, ModelPlan& plan) {
  const bool pipeline_options = !options.schedule.empty() || options.microbatches != 0 ||
                                options.stages_per_rank != 0 || options.tflops != 0;
  if (options.pp == 0 && !pipeline_options) return;
  if (plan.model != ModelKind::Transformer)
    throw UsageError(kCommand,
                     fmt::format("--pp and its options are for --model transformer; --model {} has no "
                                 "pipeline plan",
                                 options.model));
  if (options.pp == 0)
    throw UsageError(kCommand,
                     "--schedule, --microbatches, --stages-per-rank and --tflops plan a pipeline: they need "
                     "--pp (the stage ranks, at least 2)");
  plan.pp = positive("--pp", options.pp, 1);
  if (plan.pp < 2)
    throw UsageError(kCommand, fmt::format("--pp {}: a pipeline needs at least 2 stage ranks", plan.pp));
  // The schedule is simulated action by action: bounds that keep that quick.
  if (plan.pp > kPlanMaxStageRanks)
    throw UsageError(kCommand,
                     fmt::format("--pp {}: at most {} stage ranks are planned", plan.pp, kPlanMaxStageRanks));
  plan.schedule = parse_schedule(options.schedule.empty() ? "1f1b" : options.schedule);
  const bool multi =
      plan.schedule == "interleaved-1f1b" || plan.schedule == "interleaved-zb" || plan.schedule == "zbv";
  plan.stages_per_rank = positive("--stages-per-rank", options.stages_per_rank, multi ? 2 : 1);
  if (!multi && plan.stages_per_rank != 1)
    throw UsageError(kCommand,
                     fmt::format("--stages-per-rank {}: --schedule {} holds one stage per rank; the "
                                 "interleaved schedules and zbv hold several",
                                 plan.stages_per_rank, plan.schedule));
  if (plan.schedule == "zbv" && plan.stages_per_rank != 2)
    throw UsageError(kCommand,
                     fmt::format("--stages-per-rank {}: --schedule zbv holds exactly 2 stages per rank (a V)",
                                 plan.stages_per_rank));
  if (plan.world > kPlanMaxRanks / plan.pp)
    throw UsageError(kCommand, fmt::format("--pp {} x --mesh '{}': more than {} ranks", plan.pp, options.mesh,
                                           kPlanMaxRanks));
  plan.world *= plan.pp;
  const int64_t stages = product(plan.pp, plan.stages_per_rank, "the stages (--pp x --stages-per-rank)");
  if (plan.layers % stages != 0)
    throw UsageError(kCommand,
                     fmt::format("--layers {}: the pipeline has {} stages (--pp {} x {} per rank); expected "
                                 "a multiple of {} so that every stage holds as many layers",
                                 plan.layers, stages, plan.pp, plan.stages_per_rank, stages));
  plan.microbatches = positive("--microbatches", options.microbatches, plan.pp);
  if (plan.microbatches > kPlanMaxMicrobatches)
    throw UsageError(kCommand, fmt::format("--microbatches {}: at most {} micro-batches are planned",
                                           plan.microbatches, kPlanMaxMicrobatches));
  if (stages * plan.microbatches > kPlanMaxStageMicrobatches)
    throw UsageError(kCommand,
                     fmt::format("--microbatches {} x {} stages: at most {} stage micro-batches are planned",
                                 plan.microbatches, stages, kPlanMaxStageMicrobatches));
  const int64_t dp = plan.strategy == Strategy::Megatron ? 1 : plan.mesh_shape.front();
  if (plan.batch % plan.microbatches != 0 || (plan.batch / plan.microbatches) % dp != 0)
    throw UsageError(kCommand,
                     fmt::format("--batch {}: expected a multiple of --microbatches {} x the data-parallel "
                                 "ranks {} = {} (each micro-batch splits evenly over the replicas)",
                                 plan.batch, plan.microbatches, dp, plan.microbatches * dp));
  plan.tflops = options.tflops == 0 ? 100.0 : options.tflops;
  if (!(plan.tflops > 0) || !std::isfinite(plan.tflops))
    throw UsageError(kCommand,
                     fmt::format("--tflops {}: expected a positive number of TFLOP/s", plan.tflops));
  try {
    schedule_plan(plan);
  } catch (const Error& e) {
    throw UsageError(kCommand, fmt::format("--schedule {} with --pp {} and --microbatches {}: {}",
                                           plan.schedule, plan.pp, plan.microbatches, e.what()));
  }
}

}  // namespace

ModelPlan check_model_plan(const PlanOptions& options) {
  ModelPlan plan;
  plan.model = parse_model(options.model);
  for (const auto& [option, value] :
       {std::pair{"--shape", &options.shape}, {"--from", &options.from}, {"--to", &options.to}})
    if (!value->empty())
      throw UsageError(
          kCommand, fmt::format("{} plans one redistribution; it cannot be combined with --model", option));

  plan.mesh_shape = parse_sizes("--mesh", options.mesh, 1);
  if (plan.mesh_shape.size() > 2)
    throw UsageError(kCommand,
                     fmt::format("--mesh '{}': a model plan takes a 1-d or 2-d mesh (data parallel x tensor "
                                 "parallel), not {} dims",
                                 options.mesh, plan.mesh_shape.size()));
  plan.strategy = parse_strategy(options, plan.model, plan.mesh_shape.size());
  for (int64_t size : plan.mesh_shape)
    if ((plan.world *= size) > kPlanMaxRanks)
      throw UsageError(kCommand, fmt::format("--mesh '{}': more than {} ranks", options.mesh, kPlanMaxRanks));
  if (!options.names.empty()) {
    plan.names = split(options.names, ',');
    if (plan.names.size() != plan.mesh_shape.size())
      throw UsageError(kCommand, fmt::format("--names '{}' gives {} name(s) but the mesh has {} dim(s)",
                                             options.names, plan.names.size(), plan.mesh_shape.size()));
    for (const std::string& name : plan.names)
      if (name.empty() || std::count(plan.names.begin(), plan.names.end(), name) > 1)
        throw UsageError(
            kCommand,
            fmt::format("--names '{}': expected one distinct, non-empty name per mesh dim", options.names));
  } else if (plan.mesh_shape.size() == 2) {
    plan.names = {"dp", "tp"};
  } else {
    plan.names = {plan.strategy == Strategy::Megatron ? "tp" : "dp"};
  }

  if (options.hidden == 0) throw UsageError(kCommand, "--hidden is required with --model");
  if (options.batch == 0) throw UsageError(kCommand, "--batch is required with --model");
  plan.hidden = positive("--hidden", options.hidden, 0);
  plan.batch = positive("--batch", options.batch, 0);
  plan.layers = positive("--layers", options.layers, 1);
  if (plan.layers > 4096)
    throw UsageError(kCommand, fmt::format("--layers {}: at most 4096 layers are planned", plan.layers));
  plan.seq = positive("--seq", options.seq, 1);
  plan.heads = positive("--heads", options.heads, 1);
  // The transformer's default width is Llama's (check_transformer); the blocks' is 4 x hidden.
  plan.ffn = plan.model == ModelKind::Transformer
                 ? positive("--ffn", options.ffn, 1)
                 : positive("--ffn", options.ffn, product(4, plan.hidden, "the default --ffn, 4 x --hidden"));
  if (plan.model == ModelKind::Mlp && options.heads != 0)
    throw UsageError(kCommand,
                     "--heads is for --model transformer-block or transformer; an mlp has no attention");
  for (const auto& [option, given] :
       {std::pair{"--kv-heads", options.kv_heads != 0}, {"--vocab", options.vocab != 0}})
    if (given && plan.model != ModelKind::Transformer)
      throw UsageError(
          kCommand, fmt::format("{} is for --model transformer; --model {} has none", option, options.model));
  if (plan.hidden % plan.heads != 0)
    throw UsageError(kCommand,
                     fmt::format("--heads {} does not divide --hidden {}: every head needs the same width",
                                 plan.heads, plan.hidden));
  if (plan.model == ModelKind::Transformer) check_transformer(options, plan);
  plan.dtype = parse_dtype(options.dtype);
  if (!is_floating(plan.dtype))
    throw UsageError(kCommand,
                     fmt::format("--dtype '{}': a model needs a floating-point dtype", options.dtype));
  plan.backend = options.backend.empty() ? "meta" : options.backend;
  plan.topology = options.topology;
  plan.trace = options.trace;
  check_pipeline(options, plan);

  // Every tensor's element count must fit, whatever the backend: the largest ones.
  const int64_t tokens = product(plan.batch, plan.seq, "tokens (--batch x --seq)");
  const int64_t weights = product(plan.hidden, plan.ffn, "the MLP weight (--hidden x --ffn)");
  const int64_t wide = product(tokens, plan.ffn, "the MLP activation (tokens x --ffn)");
  int64_t largest = std::max(weights, wide);
  if (plan.model != ModelKind::Mlp) {
    const int64_t scores = product(product(plan.batch, plan.heads, "batch x heads"),
                                   product(plan.seq, plan.seq, "--seq squared"), "the attention scores");
    largest = std::max(largest, scores);
  }
  if (plan.model == ModelKind::Transformer) {
    largest = std::max({largest, product(plan.vocab, plan.hidden, "the embedding (--vocab x --hidden)"),
                        product(tokens, plan.vocab, "the logits (tokens x --vocab)")});
  }
  const int64_t bytes =
      product(largest, static_cast<int64_t>(itemsize(plan.dtype)), "the largest tensor's bytes");
  // Off the meta backend every rank may hold a copy of the largest tensor, as in the other form.
  if (plan.backend != "meta" && bytes > kPlanMaxMemory / (plan.world + 1))
    throw UsageError(kCommand,
                     fmt::format("the model's largest tensor ({} bytes) is too large to plan on backend '{}' "
                                 "with {} ranks: (ranks + 1) x its size must stay within {} GiB; plan it "
                                 "on the meta backend (the default), which allocates nothing",
                                 bytes, plan.backend, plan.world, kPlanMaxMemory >> 30));
  if (plan.topology.empty()) return plan;
  try {
    Topology::preset(plan.topology, static_cast<int>(plan.world));
  } catch (const Error& e) {
    throw UsageError(kCommand, fmt::format("--topology: {}", e.what()));
  }
  if (plan.pp > 1) {
    // A stage's collectives are planned on the stage's own ranks, under the same preset.
    try {
      Topology::preset(plan.topology, static_cast<int>(stage_world(plan)));
    } catch (const Error& e) {
      throw UsageError(kCommand,
                       fmt::format("--topology '{}' must also fit one pipeline stage's {} ranks, which are "
                                   "planned on their own (fully_connected, ring and nodes:K with K "
                                   "dividing them do): {}",
                                   plan.topology, stage_world(plan), e.what()));
    }
  }
  return plan;
}

PlanOptions parse_plan_options(const std::vector<std::string>& args) {
  CLI::App app("plan", "plan");
  PlanOptions options;
  add_plan_options(app, options);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError(kCommand, e.what());
  }
  return options;
}

PlanRequest parse_plan_arguments(const std::vector<std::string>& args) {
  return check_plan(parse_plan_options(args));
}

}  // namespace tessera::cli
