// `tessera plan --model transformer`: one training step of the library's reference model,
// ts::models::Transformer, made on the plan's backend (normally meta: shapes only) and
// parallelized with the same calls a training program makes (parallelize_module with the
// tensor-parallel plan, fully_shard, replicate). Forward, the loss and backward run under
// CommCounters, so the tables show what that program would communicate.
#pragma once

#include "model_plan.hpp"

namespace tessera::cli {

// What one step of a transformer plan costs, for a pipeline plan built from its stage's step.
struct TransformerStepCost {
  double forward_seconds = 0;    // estimated communication time of the forward and the loss
  double backward_seconds = 0;   // of the backward
  double optimizer_seconds = 0;  // of the gradients' reductions still pending at optimizer.step
  int64_t activation_bytes = 0;  // held from the forward for the backward: the largest over ranks
};

// Runs one step of `plan` (its model is ModelKind::Transformer, without --pp) and prints the
// tables; fills `cost` when given (the forward then runs under a MemoryCounter too). Returns the
// exit status.
int plan_transformer(const ModelPlan& plan, TransformerStepCost* cost = nullptr);

// `--pp`: one stage's step on one micro-batch (plan_transformer on the stage's layers and mesh),
// then the pipeline schedule costed from it: step time, bubble fraction, peak activations per
// stage; with --trace, the schedule's timeline.
int plan_pipeline(const ModelPlan& plan);

}  // namespace tessera::cli
