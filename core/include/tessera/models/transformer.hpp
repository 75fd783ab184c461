// ts::models::Transformer: a Llama-style decoder (token embedding; blocks of RMSNorm, attention
// with rotary position embeddings and grouped-query heads, causal SDPA, RMSNorm, SwiGLU
// feed-forward; final norm; output projection), with torchtitan's Llama module and parameter
// names (tok_embeddings.weight, layers.0.attention.wq.weight, layers.0.feed_forward.w1.weight,
// norm.weight, output.weight) so its tensor-parallel plan reads as torchtitan's.
//
// Every module is an nn module whose forward runs through the forward hooks, so
// parallelize_module and fully_shard apply to it; the attention works on the heads it is given
// (n_heads / tp after a column-parallel wq), as torchtitan's view(bs, seqlen, -1, head_dim) does.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/nn/modules.hpp"

namespace tessera::models {

struct TransformerArgs {
  int64_t dim = 4096;
  int64_t n_layers = 32;
  int64_t n_heads = 32;
  int64_t n_kv_heads = 0;  // 0: as many as n_heads (no grouping)
  int64_t vocab_size = 32000;
  int64_t ffn_hidden = 11008;
  int64_t max_seq_len = 2048;
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;
  DType dtype = kFloat32;  // of the parameters
  std::string backend;     // where parameters live: "" the default backend, "meta" shapes only
};

// Applies rotary position embeddings to x [batch, seq, heads, head_dim]: each pair (x[2i],
// x[2i+1]) at position p is rotated by the angle p * theta^(-2i/head_dim) (Llama's complex
// multiplication, written in real arithmetic). cos and sin are [max_seq_len, head_dim/2] tables;
// the first seq rows are used. A DTensor x may be sharded on the batch or heads dim.
nn::Value apply_rotary_emb(const nn::Value& x, const Tensor& cos, const Tensor& sin);

class AttentionImpl : public nn::Module {
 public:
  explicit AttentionImpl(const TransformerArgs& args);
  // x [batch, seq, dim]; cos/sin the rotary tables.
  nn::Value forward(const nn::Value& x, const Tensor& cos, const Tensor& sin);

  int64_t n_heads, n_kv_heads, head_dim;
  nn::Linear wq{nullptr}, wk{nullptr}, wv{nullptr}, wo{nullptr};
};
TESSERA_MODULE(Attention);

// w2(silu(w1(x)) * w3(x)).
class FeedForwardImpl : public nn::Module {
 public:
  explicit FeedForwardImpl(const TransformerArgs& args);  // dim -> ffn_hidden -> dim
  nn::Value forward(const nn::Value& x);

  nn::Linear w1{nullptr}, w2{nullptr}, w3{nullptr};
};
TESSERA_MODULE(FeedForward);

// h = x + attention(attention_norm(x)); out = h + feed_forward(ffn_norm(h)).
class TransformerBlockImpl : public nn::Module {
 public:
  explicit TransformerBlockImpl(const TransformerArgs& args);
  nn::Value forward(const nn::Value& x, const Tensor& cos, const Tensor& sin);

  Attention attention{nullptr};
  FeedForward feed_forward{nullptr};
  nn::RMSNorm attention_norm{nullptr}, ffn_norm{nullptr};
};
TESSERA_MODULE(TransformerBlock);

class TransformerImpl : public nn::Module {
 public:
  explicit TransformerImpl(const TransformerArgs& args);
  // tokens [batch, seq] (int64) -> logits [batch, seq, vocab_size].
  nn::Value forward(const nn::Value& tokens);

  TransformerArgs args;
  nn::Embedding tok_embeddings{nullptr};
  nn::ModuleList layers{nullptr};
  nn::RMSNorm norm{nullptr};
  nn::Linear output{nullptr};
  Tensor rope_cos, rope_sin;  // [max_seq_len, head_dim / 2], non-persistent buffers
};
TESSERA_MODULE(Transformer);

}  // namespace tessera::models
