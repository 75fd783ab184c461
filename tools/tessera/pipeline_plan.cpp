// `tessera plan --model transformer --pp P --schedule NAME`: a pipeline of P stage ranks, each
// stage a slice of the layers laid out over --mesh as the plan without --pp lays out the model.
//
// The stages are uniform: one stage's step on one micro-batch is planned by running it (its
// collectives counted, as without --pp), and the schedule's cost model places every rank's actions:
//   forward          the stage's forward compute + its forward communication
//   backward_input   the stage's forward compute again (the input gradients' matmuls) + the
//                    backward's communication
//   backward_weight  the stage's forward compute again (the weight gradients' matmuls)
//   message          the hidden states handed to the next stage, over the topology's link
// Compute time counts the layers' matmul and attention FLOPs at --tflops per rank; the embedding and
// the output layer's compute are left out (they sit on the first and last stage only), while the
// stage's counted communication includes them. The pending reductions at optimizer.step come once
// per step, after the schedule.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "transformer_plan.hpp"

namespace tessera::cli {

namespace {

// One stage of the pipeline on one micro-batch, planned as a model of its own.
ModelPlan stage_plan(const ModelPlan& plan) {
  ModelPlan stage = plan;
  stage.pp = 1;
  stage.world = stage_world(plan);
  stage.layers = plan.layers / (plan.pp * plan.stages_per_rank);
  stage.batch = plan.batch / plan.microbatches;
  stage.trace.clear();
  return stage;
}

struct StageShape {
  int64_t dp = 1, tp = 1;
};

StageShape stage_shape(const ModelPlan& plan) {
  switch (plan.strategy) {
    case Strategy::Megatron:
      return {1, plan.mesh_shape.at(0)};
    case Strategy::Fsdp:
    case Strategy::Dp:
      return {plan.mesh_shape.at(0), 1};
    case Strategy::FsdpTp:
      return {plan.mesh_shape.at(0), plan.mesh_shape.at(1)};
  }
  return {};
}

// One rank's forward FLOPs for one micro-batch through one stage's layers: the projections and the
// MLP (2 x tokens x weights) and attention's scores and weighted sum (2 x 2 x tokens x seq x dim),
// tensor parallelism splitting both.
double stage_forward_flops(const ModelPlan& plan, const ModelPlan& stage) {
  const StageShape shape = stage_shape(plan);
  const int64_t replica_batch = stage.batch / shape.dp;  // whole sequences per data-parallel replica
  const double tokens = static_cast<double>(replica_batch) * static_cast<double>(plan.seq);
  const double dim = static_cast<double>(plan.hidden);
  const double kv_dim = dim / static_cast<double>(plan.heads) * static_cast<double>(plan.kv_heads);
  const double weights = 2 * dim * dim + 2 * dim * kv_dim + 3 * dim * static_cast<double>(plan.ffn);
  const double per_layer = 2 * tokens * weights + 4 * tokens * static_cast<double>(plan.seq) * dim;
  return per_layer * static_cast<double>(stage.layers) / static_cast<double>(shape.tp);
}

// The bytes a rank hands the next stage per micro-batch: its rows of the hidden states, sequence
// sharded over tensor parallelism (the plan's sequence parallelism).
int64_t handed_over_bytes(const ModelPlan& plan, const ModelPlan& stage) {
  const StageShape shape = stage_shape(plan);
  return stage.batch / shape.dp * (plan.seq / shape.tp) * plan.hidden *
         static_cast<int64_t>(itemsize(plan.dtype));
}

std::string seconds_text(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }

}  // namespace

int plan_pipeline(const ModelPlan& plan) {
  // The trace is written last: a path that cannot be written is refused before the plan runs.
  if (!plan.trace.empty() && !std::ofstream(plan.trace, std::ios::app))
    throw UsageError("tessera plan",
                     fmt::format("--trace '{}': cannot write it (missing directory or no permission); give "
                                 "a writable path",
                                 plan.trace));
  const pipelining::SchedulePlan schedule = schedule_plan(plan);
  const ModelPlan stage = stage_plan(plan);
  std::cout << fmt::format(
      "pipeline stage: {} layer(s) of {} on [{}], one micro-batch of {} sequence(s); the whole model is {} "
      "stage(s) on {} stage rank(s) ({} ranks in all)\n\n",
      stage.layers, plan.layers, fmt::join(plan.mesh_shape, ", "), stage.batch, schedule.num_stages(),
      plan.pp, plan.world);
  TransformerStepCost step;
  if (const int status = plan_transformer(stage, &step); status != 0) return status;

  const double compute = stage_forward_flops(plan, stage) / (plan.tflops * 1e12);
  const int64_t message_bytes = handed_over_bytes(plan, stage);
  const ScopedTopology topology(plan.topology);
  const double message = default_topology(static_cast<int>(plan.world))
                             .transfer_time(0, static_cast<int>(stage_world(plan)), message_bytes);
  pipelining::ActionCosts costs;
  costs.forward = compute + step.forward_seconds;
  costs.backward_input = compute + step.backward_seconds;
  costs.backward_weight = compute;
  costs.message = message;
  const double step_time = schedule.step_time(costs) + step.optimizer_seconds;

  std::cout
      << fmt::format("\npipeline    {} ({}): {} stage(s) over pp={}, {} micro-batch(es)\n", plan.schedule,
                     schedule.name(), schedule.num_stages(), plan.pp, plan.microbatches)
      << fmt::format(
             "costs       per stage and micro-batch: forward {} (compute {} at {} TFLOP/s + communication "
             "{}), backward {} + {} (input + weight gradients), hand-over {} ({})\n",
             seconds_text(costs.forward), seconds_text(compute), plan.tflops,
             seconds_text(step.forward_seconds), seconds_text(costs.backward_input),
             seconds_text(costs.backward_weight), seconds_text(message), bytes_text(message_bytes))
      << fmt::format("step        estimated {} ({} schedule + {} pending reductions)\n",
                     seconds_text(step_time), seconds_text(step_time - step.optimizer_seconds),
                     seconds_text(step.optimizer_seconds))
      << fmt::format("bubble      {:.4f} of rank time idle", schedule.bubble_fraction(costs));
  if (plan.schedule == "gpipe" || plan.schedule == "1f1b")
    std::cout << fmt::format(
        " (uniform stages without hand-over cost: (p-1)/(m+p-1) = {:.4f})",
        static_cast<double>(plan.pp - 1) / static_cast<double>(plan.microbatches + plan.pp - 1));
  std::cout << "\n\nstage  rank  peak activations\n";
  for (int s = 0; s < schedule.num_stages(); ++s) {
    const int held = schedule.peak_activations(s);
    std::cout << fmt::format("{:>5}  {:>4}  {} micro-batch(es), {}\n", s, schedule.rank_of_stage(s), held,
                             bytes_text(held * step.activation_bytes));
  }
  if (!plan.trace.empty()) {
    schedule.write_trace(plan.trace, costs);
    std::cout << fmt::format("pipeline trace written to {}\n", plan.trace);
  }
  return 0;
}

}  // namespace tessera::cli
