// nn::Embedding: a lookup table of rows.
#include <fmt/format.h>

#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/nn/functional.hpp"
#include "tessera/nn/modules.hpp"

namespace tessera::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options_in) : Module("Embedding"), options(options_in) {
  if (options.num_embeddings() < 0 || options.embedding_dim() < 0)
    throw Error(fmt::format("nn::Embedding: num_embeddings={} and embedding_dim={} must be >= 0",
                            options.num_embeddings(), options.embedding_dim()));
  weight = register_parameter("weight", randn({options.num_embeddings(), options.embedding_dim()},
                                              TensorOptions(kFloat32).backend(options.backend()))
                                            .to(options.dtype()));
}

Value EmbeddingImpl::forward(const Value& indices) {
  return run_forward(
      {indices}, [this](const std::vector<Value>& in) { return functional::embedding(in.at(0), weight); });
}

std::string EmbeddingImpl::extra_repr() const {
  return fmt::format("{}, {}", options.num_embeddings(), options.embedding_dim());
}

}  // namespace tessera::nn
