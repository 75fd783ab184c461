// A pipeline stage cut from the reference Transformer.
#include "tessera/models/transformer_stage.hpp"

#include <fmt/format.h>

#include <string>

#include "tessera/errors.hpp"

namespace tessera::models {

TransformerStageImpl::TransformerStageImpl(const Transformer& model, int64_t first, int64_t end)
    : Module("TransformerStage"), args(model->args), first_layer(first), end_layer(end) {
  const int64_t n = model->args.n_layers;
  if (first < 0 || end > n || first >= end)
    throw Error(fmt::format(
        "models::TransformerStage: layers [{}, {}) are not a non-empty range of the model's {} layers "
        "(expected 0 <= first_layer < end_layer <= {})",
        first, end, n, n));
  if (is_first()) tok_embeddings = register_module("tok_embeddings", model->tok_embeddings);
  // A plain module holding the blocks under their model indices: a ModuleList would renumber them.
  layers = register_module("layers", std::make_shared<nn::Module>("ModuleDict"));
  for (int64_t i = first; i < end; ++i) {
    auto block = model->layers->at<TransformerBlockImpl>(static_cast<size_t>(i));
    layers->register_module(std::to_string(i), block);
    blocks_.push_back(std::move(block));
  }
  if (is_last()) {
    norm = register_module("norm", model->norm);
    output = register_module("output", model->output);
  }
  rope_cos = register_buffer("rope_cos", model->rope_cos, /*persistent=*/false);
  rope_sin = register_buffer("rope_sin", model->rope_sin, /*persistent=*/false);
}

nn::Value TransformerStageImpl::forward(const nn::Value& x) {
  return run_forward({x}, [this](const std::vector<nn::Value>& in) {
    nn::Value h = is_first() ? tok_embeddings(in.at(0)) : in.at(0);
    for (const auto& block : blocks_) h = block->forward(h, rope_cos, rope_sin);
    return is_last() ? output(norm(h)) : h;
  });
}

}  // namespace tessera::models
