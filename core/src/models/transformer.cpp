// The Llama-style reference Transformer: attention, feed-forward, blocks and the model.
#include "tessera/models/transformer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/nn/functional.hpp"

namespace tessera::models {
namespace {

namespace F = nn::functional;

void check_args(const TransformerArgs& args) {
  const auto positive = [](const char* name, int64_t value) {
    if (value <= 0) throw Error(fmt::format("models::Transformer: {}={} must be > 0", name, value));
  };
  positive("dim", args.dim);
  positive("n_layers", args.n_layers);
  positive("n_heads", args.n_heads);
  positive("vocab_size", args.vocab_size);
  positive("ffn_hidden", args.ffn_hidden);
  positive("max_seq_len", args.max_seq_len);
  if (args.n_kv_heads < 0)
    throw Error(fmt::format("models::Transformer: n_kv_heads={} must be >= 0", args.n_kv_heads));
  const int64_t kv = args.n_kv_heads == 0 ? args.n_heads : args.n_kv_heads;
  if (args.dim % args.n_heads != 0 || (args.dim / args.n_heads) % 2 != 0)
    throw Error(fmt::format("models::Transformer: dim={} must be n_heads={} times an even head_dim", args.dim,
                            args.n_heads));
  if (args.n_heads % kv != 0)
    throw Error(
        fmt::format("models::Transformer: n_heads={} must be a multiple of n_kv_heads={}", args.n_heads, kv));
  if (!(args.norm_eps >= 0.0))
    throw Error(fmt::format("models::Transformer: norm_eps={} must be >= 0", args.norm_eps));
  if (!(args.rope_theta > 0.0))
    throw Error(fmt::format("models::Transformer: rope_theta={} must be > 0", args.rope_theta));
}

nn::Linear projection(const TransformerArgs& args, int64_t in, int64_t out) {
  return nn::Linear(nn::LinearOptions(in, out).bias(false).dtype(args.dtype).backend(args.backend));
}

nn::RMSNorm norm_of(const TransformerArgs& args) {
  return nn::RMSNorm(
      nn::RMSNormOptions({args.dim}).eps(args.norm_eps).dtype(args.dtype).backend(args.backend));
}

// cos and sin of position * theta^(-2i/head_dim), [max_seq_len, head_dim/2], in float32. The
// angles are computed in double, so the tables do not depend on the math library's float paths.
std::pair<Tensor, Tensor> rotary_tables(int64_t head_dim, int64_t max_seq_len, double theta) {
  const int64_t half = head_dim / 2;
  std::vector<float> cos_values(static_cast<size_t>(max_seq_len * half));
  std::vector<float> sin_values(cos_values.size());
  for (int64_t position = 0; position < max_seq_len; ++position) {
    for (int64_t i = 0; i < half; ++i) {
      const double inverse_frequency =
          1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(head_dim));
      const double angle = static_cast<double>(position) * inverse_frequency;
      cos_values[static_cast<size_t>(position * half + i)] = static_cast<float>(std::cos(angle));
      sin_values[static_cast<size_t>(position * half + i)] = static_cast<float>(std::sin(angle));
    }
  }
  return {from_values(cos_values, {max_seq_len, half}), from_values(sin_values, {max_seq_len, half})};
}

}  // namespace

AttentionImpl::AttentionImpl(const TransformerArgs& args)
    : Module("Attention"),
      n_heads(args.n_heads),
      n_kv_heads(args.n_kv_heads == 0 ? args.n_heads : args.n_kv_heads),
      head_dim(args.dim / args.n_heads) {
  wq = register_module("wq", projection(args, args.dim, n_heads * head_dim));
  wk = register_module("wk", projection(args, args.dim, n_kv_heads * head_dim));
  wv = register_module("wv", projection(args, args.dim, n_kv_heads * head_dim));
  wo = register_module("wo", projection(args, n_heads * head_dim, args.dim));
}

nn::Value AttentionImpl::forward(const nn::Value& x, const Tensor& cos, const Tensor& sin) {
  return run_forward({x, cos, sin}, [this](const std::vector<nn::Value>& in) {
    const nn::Value& input = in.at(0);
    const int64_t batch = input.size(0);
    const int64_t seq = input.size(1);
    // -1 heads: after a column-parallel wq this rank holds n_heads / tp of them.
    const nn::Value q = apply_rotary_emb(F::view(wq(input), {batch, seq, -1, head_dim}), in.at(1).tensor(),
                                         in.at(2).tensor());
    const nn::Value k = apply_rotary_emb(F::view(wk(input), {batch, seq, -1, head_dim}), in.at(1).tensor(),
                                         in.at(2).tensor());
    const nn::Value v = F::view(wv(input), {batch, seq, -1, head_dim});
    // [batch, heads, seq, head_dim] for attention; grouped kv heads are shared by enable_gqa.
    const nn::Value attended = F::scaled_dot_product_attention(
        F::transpose(q, 1, 2), F::transpose(k, 1, 2), F::transpose(v, 1, 2), nn::Value(), 0.0,
        /*is_causal=*/true, std::nullopt, n_kv_heads != n_heads);
    return wo(F::reshape(F::transpose(attended, 1, 2), {batch, seq, -1}));
  });
}

FeedForwardImpl::FeedForwardImpl(const TransformerArgs& args) : Module("FeedForward") {
  const int64_t dim = args.dim, hidden_dim = args.ffn_hidden;
  w1 = register_module("w1", projection(args, dim, hidden_dim));
  w2 = register_module("w2", projection(args, hidden_dim, dim));
  w3 = register_module("w3", projection(args, dim, hidden_dim));
}

nn::Value FeedForwardImpl::forward(const nn::Value& x) {
  return run_forward(
      {x}, [this](const std::vector<nn::Value>& in) { return w2(F::silu(w1(in.at(0))) * w3(in.at(0))); });
}

TransformerBlockImpl::TransformerBlockImpl(const TransformerArgs& args) : Module("TransformerBlock") {
  attention = register_module("attention", Attention(args));
  feed_forward = register_module("feed_forward", FeedForward(args));
  attention_norm = register_module("attention_norm", norm_of(args));
  ffn_norm = register_module("ffn_norm", norm_of(args));
}

nn::Value TransformerBlockImpl::forward(const nn::Value& x, const Tensor& cos, const Tensor& sin) {
  return run_forward({x, cos, sin}, [this](const std::vector<nn::Value>& in) {
    const nn::Value h = in.at(0) + attention(attention_norm(in.at(0)), in.at(1).tensor(), in.at(2).tensor());
    return h + feed_forward(ffn_norm(h));
  });
}

TransformerImpl::TransformerImpl(const TransformerArgs& args_in) : Module("Transformer"), args(args_in) {
  check_args(args);
  tok_embeddings = register_module(
      "tok_embeddings",
      nn::Embedding(nn::EmbeddingOptions(args.vocab_size, args.dim).dtype(args.dtype).backend(args.backend)));
  layers = register_module("layers", nn::ModuleList());
  for (int64_t i = 0; i < args.n_layers; ++i) layers->push_back(TransformerBlock(args));
  norm = register_module("norm", norm_of(args));
  output = register_module("output", projection(args, args.dim, args.vocab_size));
  auto [cos, sin] = rotary_tables(args.dim / args.n_heads, args.max_seq_len, args.rope_theta);
  rope_cos = register_buffer("rope_cos", cos.to(TensorOptions(kFloat32).backend(args.backend)),
                             /*persistent=*/false);
  rope_sin = register_buffer("rope_sin", sin.to(TensorOptions(kFloat32).backend(args.backend)),
                             /*persistent=*/false);
}

nn::Value TransformerImpl::forward(const nn::Value& tokens) {
  return run_forward({tokens}, [this](const std::vector<nn::Value>& in) {
    nn::Value h = tok_embeddings(in.at(0));
    for (const auto& layer : *layers)
      h = std::static_pointer_cast<TransformerBlockImpl>(layer)->forward(h, rope_cos, rope_sin);
    return output(norm(h));
  });
}

}  // namespace tessera::models
