// ts::models::TransformerStage: one pipeline stage of a Transformer, cut as torchtitan's manual
// split cuts its Llama (it deletes the other layers from a copy of the model and sets the token
// embedding, final norm and output projection to None where a stage has none):
//
//   ts::models::Transformer model(args);                     // the whole model, seeded alike on every rank
//   ts::models::TransformerStage stage(model, 2, 4);         // layers 2 and 3, norm and output
//   ts::pipelining::PipelineStage pipeline_stage(stage, 1, 2);
//
// The stage takes layers [first_layer, end_layer), the token embedding when it is the first stage
// (first_layer == 0) and the final norm and output projection when it is the last (end_layer ==
// n_layers). It shares those modules with the model it is cut from, so cut it from a model made
// for it. Its parameters keep the whole model's names ("layers.2.attention.wq.weight": layers keep
// their index in the model, as torchtitan's ModuleDict of layers does), so state dicts, plans
// ("layers.*.attention") and gradients line up with the unsplit model's.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/models/transformer.hpp"

namespace tessera::models {

class TransformerStageImpl : public nn::Module {
 public:
  TransformerStageImpl(const Transformer& model, int64_t first_layer, int64_t end_layer);
  // The first stage takes tokens [batch, seq] (int64), the others hidden states [batch, seq, dim];
  // the last returns logits [batch, seq, vocab_size], the others hidden states.
  nn::Value forward(const nn::Value& x);

  bool is_first() const { return first_layer == 0; }
  bool is_last() const { return end_layer == args.n_layers; }

  TransformerArgs args;
  int64_t first_layer, end_layer;
  nn::Embedding tok_embeddings{nullptr};  // empty unless the first stage
  std::shared_ptr<nn::Module> layers;     // the blocks, named by their index in the model
  nn::RMSNorm norm{nullptr};              // empty unless the last stage
  nn::Linear output{nullptr};             // empty unless the last stage
  Tensor rope_cos, rope_sin;              // the model's rotary tables (non-persistent buffers)

 private:
  std::vector<std::shared_ptr<TransformerBlockImpl>> blocks_;  // in order
};
TESSERA_MODULE(TransformerStage);

}  // namespace tessera::models
