// PipelineStage: a module chunk and its place in the pipeline.
#include <fmt/format.h>

#include "tessera/errors.hpp"
#include "tessera/pipelining.hpp"

namespace tessera::pipelining {

PipelineStage::PipelineStage(std::shared_ptr<nn::Module> module, Forward forward, int stage_index,
                             int num_stages, ProcessGroup group)
    : module_(std::move(module)),
      forward_(std::move(forward)),
      stage_index_(stage_index),
      num_stages_(num_stages),
      group_(std::move(group)) {
  if (module_ == nullptr || !forward_)
    throw Error("PipelineStage: the module is empty; pass the module chunk this stage runs");
  if (num_stages < 1)
    throw Error(fmt::format("PipelineStage: num_stages is {}; expected at least 1", num_stages));
  if (stage_index < 0 || stage_index >= num_stages)
    throw Error(fmt::format("PipelineStage: stage_index {} is outside the {} stage(s) (0..{})", stage_index,
                            num_stages, num_stages - 1));
}

Tensor PipelineStage::forward(const Tensor& x) const {
  const nn::Value out = forward_(nn::Value(x));
  if (out.is_dtensor())
    throw Error(fmt::format(
        "PipelineStage {}: the module returned a DTensor; a stage's output must be a Tensor", stage_index_));
  return out.tensor();
}

}  // namespace tessera::pipelining
