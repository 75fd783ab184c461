// `tessera plan --model transformer`: one training step of the library's reference model,
// ts::models::Transformer, made on the plan's backend (normally meta: shapes only) and
// parallelized with the same calls a training program makes (parallelize_module with the
// tensor-parallel plan, fully_shard, replicate). Forward, the loss and backward run under
// CommCounters, so the tables show what that program would communicate.
#pragma once

#include "model_plan.hpp"

namespace tessera::cli {

// Runs one step of `plan` (its model is ModelKind::Transformer) and prints the tables; returns the
// exit status.
int plan_transformer(const ModelPlan& plan);

}  // namespace tessera::cli
