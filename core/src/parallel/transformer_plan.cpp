// The reference Transformer's tensor-parallel plan.
#include "tessera/parallel/transformer_plan.hpp"

namespace tessera {

ParallelizePlan transformer_tp_plan(bool loss_parallel) {
  const ColwiseParallel output =
      loss_parallel
          ? ColwiseParallel{.input_layouts = Shard(1), .output_layouts = Shard(-1), .use_local_output = false}
          : ColwiseParallel{.input_layouts = Shard(1), .output_layouts = Replicate()};
  return {
      {"tok_embeddings", RowwiseParallel{.input_layouts = Replicate(), .output_layouts = Shard(1)}},
      {"norm", SequenceParallel{}},
      {"output", output},
      {"layers.*.attention_norm", SequenceParallel{}},
      {"layers.*.attention",
       PrepareModuleInput{{Shard(1), std::nullopt, std::nullopt}, {Replicate(), std::nullopt, std::nullopt}}},
      {"layers.*.attention.wq", ColwiseParallel{}},
      {"layers.*.attention.wk", ColwiseParallel{}},
      {"layers.*.attention.wv", ColwiseParallel{}},
      {"layers.*.attention.wo", RowwiseParallel{.output_layouts = Shard(1)}},
      {"layers.*.ffn_norm", SequenceParallel{}},
      {"layers.*.feed_forward", PrepareModuleInput{{Shard(1)}, {Replicate()}}},
      {"layers.*.feed_forward.w1", ColwiseParallel{}},
      {"layers.*.feed_forward.w2", RowwiseParallel{.output_layouts = Shard(1)}},
      {"layers.*.feed_forward.w3", ColwiseParallel{}},
  };
}

ParallelizePlan transformer_tp_plan(const models::TransformerStage& stage, bool loss_parallel) {
  ParallelizePlan plan;
  for (auto& [key, style] : transformer_tp_plan(loss_parallel)) {
    if (key == "tok_embeddings" && !stage->is_first()) continue;
    if ((key == "norm" || key == "output") && !stage->is_last()) continue;
    if (key == "output" && loss_parallel)
      style =
          ColwiseParallel{.input_layouts = Shard(1), .output_layouts = Shard(-1), .use_local_output = true};
    plan.emplace_back(key, style);
  }
  return plan;
}

}  // namespace tessera
