// The tensor-parallel plan of the reference Transformer (ts::models::Transformer): torchtitan's
// plan for its Llama, with sequence parallelism and, by default, loss parallelism.
#pragma once

#include "tessera/models/transformer_stage.hpp"
#include "tessera/parallel/style.hpp"

namespace tessera {

// Token embedding vocabulary-parallel into a sequence shard; norms sequence-parallel; attention
// and feed-forward gather the sequence, run column- then row-parallel and scatter it back; the
// output projection column-parallel. With loss_parallel the logits stay a DTensor sharded on the
// vocabulary (for cross_entropy under ts::LossParallel); without, they are gathered and returned
// as a local tensor.
ParallelizePlan transformer_tp_plan(bool loss_parallel = true);

// The same plan for one pipeline stage (models::TransformerStage): the entries of the parts the
// stage holds. A pipeline stage passes Tensors, so with loss_parallel the last stage's logits come
// back as the rank's local shard of the vocabulary (use_local_output), which the loss function lays
// out again as a DTensor (from_local(logits, tp_mesh, {Shard(-1)}), then cross_entropy under
// ts::LossParallel): the logits are never gathered.
ParallelizePlan transformer_tp_plan(const models::TransformerStage& stage, bool loss_parallel = true);

}  // namespace tessera
