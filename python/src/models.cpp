// ts.models: the reference Llama (Transformer, TransformerArgs) with torchtitan's module and
// parameter names; its blocks (TransformerBlock, Attention, FeedForward) are reachable as
// attributes (model.layers[0].attention.wq) for parallel plans and inspection.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>

#include "nn_values.hpp"

namespace tessera::python {

void bind_models(nb::module_& m) {
  nb::module_ models = m.def_submodule("models", "ts.models: the reference Llama-style Transformer.");
  using models::TransformerArgs;
  nb::class_<TransformerArgs>(models, "TransformerArgs", "The Transformer's sizes (torchtitan's ModelArgs).")
      .def(
          "__init__",
          [](TransformerArgs* self, int64_t dim, int64_t n_layers, int64_t n_heads, int64_t n_kv_heads,
             int64_t vocab_size, int64_t ffn_hidden, int64_t max_seq_len, double norm_eps, double rope_theta,
             DType dtype, const std::string& device) {
            new (self) TransformerArgs{dim,         n_layers, n_heads,    n_kv_heads, vocab_size, ffn_hidden,
                                       max_seq_len, norm_eps, rope_theta, dtype,      device};
          },
          nb::kw_only(), nb::arg("dim") = 4096, nb::arg("n_layers") = 32, nb::arg("n_heads") = 32,
          nb::arg("n_kv_heads") = 0, nb::arg("vocab_size") = 32000, nb::arg("ffn_hidden") = 11008,
          nb::arg("max_seq_len") = 2048, nb::arg("norm_eps") = 1e-5, nb::arg("rope_theta") = 10000.0,
          nb::arg("dtype") = kFloat32, nb::arg("device") = "",
          "Llama 7B's sizes by default; n_kv_heads 0 is as many as n_heads; device '' is the default "
          "backend, "
          "'meta' shapes only.")
      .def_rw("dim", &TransformerArgs::dim)
      .def_rw("n_layers", &TransformerArgs::n_layers)
      .def_rw("n_heads", &TransformerArgs::n_heads)
      .def_rw("n_kv_heads", &TransformerArgs::n_kv_heads)
      .def_rw("vocab_size", &TransformerArgs::vocab_size)
      .def_rw("ffn_hidden", &TransformerArgs::ffn_hidden)
      .def_rw("max_seq_len", &TransformerArgs::max_seq_len)
      .def_rw("norm_eps", &TransformerArgs::norm_eps)
      .def_rw("rope_theta", &TransformerArgs::rope_theta)
      .def_rw("dtype", &TransformerArgs::dtype)
      .def_rw("device", &TransformerArgs::backend);

  nb::class_<models::AttentionImpl, nn::Module>(
      models, "Attention", "Grouped-query attention with rotary embeddings and a causal mask.")
      .def(nb::init<const TransformerArgs&>(), nb::arg("args"), "wq, wk, wv, wo as the args size them.")
      .def(
          "forward",
          [](models::AttentionImpl& a, const nn::Value& x, const Tensor& cos, const Tensor& sin) {
            return without_gil([&] { return a.forward(x, cos, sin); });
          },
          nb::arg("x"), nb::arg("cos"), nb::arg("sin"), "x [batch, seq, dim] with the rotary tables.");
  nb::class_<models::FeedForwardImpl, nn::Module>(models, "FeedForward", "w2(silu(w1(x)) * w3(x)).")
      .def(nb::init<const TransformerArgs&>(), nb::arg("args"), "dim -> ffn_hidden -> dim.")
      .def(
          "forward",
          [](models::FeedForwardImpl& f, const nn::Value& x) {
            return without_gil([&] { return f.forward(x); });
          },
          nb::arg("x"), "The feed-forward of x [batch, seq, dim].");
  nb::class_<models::TransformerBlockImpl, nn::Module>(
      models, "TransformerBlock",
      "h = x + attention(attention_norm(x)); out = h + feed_forward(ffn_norm(h)).")
      .def(nb::init<const TransformerArgs&>(), nb::arg("args"), "One block as the args size it.")
      .def(
          "forward",
          [](models::TransformerBlockImpl& b, const nn::Value& x, const Tensor& cos, const Tensor& sin) {
            return without_gil([&] { return b.forward(x, cos, sin); });
          },
          nb::arg("x"), nb::arg("cos"), nb::arg("sin"), "x [batch, seq, dim] with the rotary tables.");
  nb::class_<models::TransformerImpl, nn::Module>(
      models, "Transformer",
      "A Llama-style decoder with torchtitan's names (tok_embeddings, layers.N.attention.wq, norm, output).")
      .def(nb::init<const TransformerArgs&>(), nb::arg("args"),
           "Parameters drawn from the default generator (ts.manual_seed makes them reproducible).")
      .def(
          "forward",
          [](models::TransformerImpl& t, const nn::Value& tokens) {
            return without_gil([&] { return t.forward(tokens); });
          },
          nb::arg("tokens"), "tokens [batch, seq] (int64) -> logits [batch, seq, vocab_size].")
      .def_prop_ro(
          "args", [](const models::TransformerImpl& t) { return t.args; }, "The sizes it was built with.");

  nb::class_<models::TransformerStageImpl, nn::Module>(
      models, "TransformerStage",
      "One pipeline stage of a Transformer: layers [first_layer, end_layer), with the token embedding on the "
      "first "
      "stage and the final norm and output on the last; parameters keep the whole model's names.")
      .def(
          "__init__",
          [](models::TransformerStageImpl* self, std::shared_ptr<models::TransformerImpl> model,
             int64_t first_layer, int64_t end_layer) {
            new (self)
                models::TransformerStageImpl(models::Transformer(std::move(model)), first_layer, end_layer);
          },
          nb::arg("model"), nb::arg("first_layer"), nb::arg("end_layer"),
          "Cut from `model` (shared, not copied): cut it from a model made for this stage.")
      .def(
          "forward",
          [](models::TransformerStageImpl& s, const nn::Value& x) {
            return without_gil([&] { return s.forward(x); });
          },
          nb::arg("x"), "Tokens on the first stage, hidden states elsewhere; logits from the last.")
      .def_prop_ro("is_first", &models::TransformerStageImpl::is_first)
      .def_prop_ro("is_last", &models::TransformerStageImpl::is_last);
}

}  // namespace tessera::python
