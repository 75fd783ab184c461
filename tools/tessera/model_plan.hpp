// `tessera plan --model ...`: one training step of a model laid out over a mesh, planned by running
// it. Forward, backward and gradient synchronisation go through the ordinary DTensor ops (sharding
// propagation picks every collective), normally on the meta backend, where nothing is allocated or
// computed; each layer's collectives, bytes per rank and estimated time come from a CommCounter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace tessera::cli {

// mlp and transformer-block are hand-written blocks (model_plan.cpp); transformer is the library's
// reference model, ts::models::Transformer, parallelized as users do (transformer_plan.cpp).
enum class ModelKind { Mlp, TransformerBlock, Transformer };
// How weights and activations are laid out over the mesh (see model_plan.cpp and
// transformer_plan.cpp for each). FsdpTp, the transformer's on a 2-d mesh, is tensor parallelism
// on the second dim and FSDP on the first.
enum class Strategy { Megatron, Fsdp, Dp, FsdpTp };

struct ModelPlan {
  ModelKind model = ModelKind::Mlp;
  Strategy strategy = Strategy::Megatron;
  int64_t layers = 1;
  int64_t hidden = 0;
  int64_t ffn = 0;  // the MLP's inner width
  int64_t heads = 1;
  int64_t kv_heads = 1;  // transformer: key/value heads (grouped-query attention when below heads)
  int64_t vocab = 0;     // transformer: vocabulary size
  int64_t seq = 1;
  int64_t batch = 0;
  std::vector<int64_t> mesh_shape;  // one or two dims
  std::vector<std::string> names;   // one per mesh dim
  DType dtype = kFloat32;
  std::string backend = "meta";
  std::string topology;  // "" = the configured default
  std::string trace;     // a file for the step's schedule trace, or ""
  int64_t world = 1;     // every rank: pp x the mesh's
  // Pipeline parallelism (transformer only): pp stage ranks, each holding stages_per_rank stages of
  // layers / (pp x stages_per_rank) layers laid out over `mesh_shape`; pp 1 is no pipeline.
  int64_t pp = 1;
  std::string schedule;  // the --schedule given, normalised: gpipe, 1f1b, interleaved-1f1b, ...
  int64_t microbatches = 1;
  int64_t stages_per_rank = 1;
  double tflops = 100;  // the compute one rank sustains, for the pipeline's cost model
};

// Sets the default topology preset for its lifetime when `preset` is not empty, and restores the
// one before (also when the plan ends by an exception).
class ScopedTopology {
 public:
  explicit ScopedTopology(const std::string& preset);
  ~ScopedTopology();
  ScopedTopology(const ScopedTopology&) = delete;
  ScopedTopology& operator=(const ScopedTopology&) = delete;

 private:
  std::optional<std::string> saved_;
};

const char* model_name(ModelKind kind);
const char* strategy_name(Strategy strategy);

// The ranks of one pipeline stage (mesh_shape's product): world / pp.
inline int64_t stage_world(const ModelPlan& plan) { return plan.world / plan.pp; }

// The pipeline's schedule as data (plan.pp > 1): the one PyTorch's class of that name runs. Throws
// Error when the schedule refuses the sizes (1F1B needs micro-batches >= stage ranks, ...).
inline pipelining::SchedulePlan schedule_plan(const ModelPlan& plan) {
  namespace pp = pipelining;
  const int ranks = static_cast<int>(plan.pp), m = static_cast<int>(plan.microbatches);
  const int v = static_cast<int>(plan.stages_per_rank);
  if (plan.schedule == "gpipe") return pp::ScheduleGPipe::plan(ranks, m);
  if (plan.schedule == "interleaved-1f1b") return pp::ScheduleInterleaved1F1B::plan(ranks, v, m);
  if (plan.schedule == "interleaved-zb") return pp::ScheduleInterleavedZeroBubble::plan(ranks, v, m);
  if (plan.schedule == "zbv") return pp::ScheduleZBVZeroBubble::plan(ranks, m);
  return pp::Schedule1F1B::plan(ranks, m);
}

// Runs one step of `plan` and prints the per-layer table; returns the exit status.
int plan_model(const ModelPlan& plan);

}  // namespace tessera::cli
