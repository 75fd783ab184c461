// ts.nn.functional (PyTorch: torch.nn.functional): the transformer ops on ts.Tensor or ts.DTensor
// operands (a DTensor runs the op's sharding rule, collectives included, so each runs without the
// GIL), and ts.nn.utils.clip_grad_norm_.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "nn_values.hpp"

namespace tessera::python {
namespace {

namespace F = tessera::nn::functional;
using nn::Value;

template <class F1>
auto unary(F1 op) {
  return [op](const Value& x) { return without_gil([&] { return op(x); }); };
}

void bind_utils(nb::module_& nn) {
  nb::module_ utils = nn.def_submodule("utils", "ts.nn.utils (PyTorch: torch.nn.utils): gradient clipping.");
  utils.def(
      "clip_grad_norm_",
      [](nb::handle parameters, double max_norm, double norm_type, bool error_if_nonfinite,
         std::optional<bool> foreach) {
        const std::vector<nn::Parameter> params = parameters_from(parameters, "clip_grad_norm_");
        return without_gil([&] {
          return nn::utils::clip_grad_norm_per_rank_(params, max_norm, norm_type, error_if_nonfinite,
                                                     foreach);
        });
      },
      nb::arg("parameters"), nb::arg("max_norm"), nb::arg("norm_type") = 2.0,
      nb::arg("error_if_nonfinite") = false, nb::arg("foreach") = nb::none(),
      "Scales the gradients in place so that their total norm is at most max_norm; returns the total norm "
      "before "
      "clipping as a 0-d float64 tensor (DTensor gradients count with their full tensor's norm; a local "
      "tensor "
      "holds each rank's total).");
}

}  // namespace

void bind_nn_functional(nb::module_& nn) {
  nb::module_ f = nn.def_submodule(
      "functional",
      "ts.nn.functional (PyTorch: torch.nn.functional): transformer ops on Tensors and DTensors.");
  f.def(
      "linear",
      [](const Value& input, const Value& weight, const Value& bias) {
        return without_gil([&] { return F::linear(input, weight, bias); });
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(),
      "input @ weight.T + bias (weight [out, in]).");
  f.def(
      "embedding",
      [](const Value& input, const Value& weight) {
        return without_gil([&] { return F::embedding(input, weight); });
      },
      nb::arg("input"), nb::arg("weight"), "The rows of weight at the integer indices of input.");
  f.def(
      "layer_norm",
      [](const Value& input, nb::handle normalized_shape, const Value& weight, const Value& bias,
         double eps) {
        const auto shape = normalized_shape_from(normalized_shape);
        return without_gil([&] { return F::layer_norm(input, shape, weight, bias, eps); });
      },
      nb::arg("input"), nb::arg("normalized_shape"), nb::arg("weight") = nb::none(),
      nb::arg("bias") = nb::none(), nb::arg("eps") = 1e-5,
      "(x - mean) / sqrt(var + eps) * weight + bias over the last dims.");
  f.def(
      "rms_norm",
      [](const Value& input, nb::handle normalized_shape, const Value& weight, std::optional<double> eps) {
        const auto shape = normalized_shape_from(normalized_shape);
        return without_gil([&] { return F::rms_norm(input, shape, weight, eps); });
      },
      nb::arg("input"), nb::arg("normalized_shape"), nb::arg("weight") = nb::none(),
      nb::arg("eps") = nb::none(),
      "x / sqrt(mean(x^2) + eps) * weight over the last dims; eps None is the dtype's machine epsilon.");
  f.def(
      "dropout",
      [](const Value& input, double p, bool training) {
        return without_gil([&] { return F::dropout(input, p, training); });
      },
      nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = true,
      "Zeroes elements with probability p and scales the rest by 1/(1-p); the identity when not training.");
  f.def("relu", unary([](const Value& x) { return F::relu(x); }), nb::arg("input"), "max(x, 0).");
  f.def("silu", unary([](const Value& x) { return F::silu(x); }), nb::arg("input"), "x * sigmoid(x).");
  f.def(
      "gelu",
      [](const Value& input, const std::string& approximate) {
        return without_gil([&] { return F::gelu(input, approximate); });
      },
      nb::arg("input"), nb::arg("approximate") = "none",
      "x * Phi(x) (approximate='tanh': the tanh approximation).");
  f.def(
      "softmax",
      [](const Value& input, int64_t dim) { return without_gil([&] { return F::softmax(input, dim); }); },
      nb::arg("input"), nb::arg("dim"), "exp(x) / sum(exp(x)) along dim.");
  f.def(
      "scaled_dot_product_attention",
      [](const Value& query, const Value& key, const Value& value, const Value& attn_mask, double dropout_p,
         bool is_causal, std::optional<double> scale, bool enable_gqa) {
        return without_gil([&] {
          return F::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                                 enable_gqa);
        });
      },
      nb::arg("query"), nb::arg("key"), nb::arg("value"), nb::arg("attn_mask") = nb::none(),
      nb::arg("dropout_p") = 0.0, nb::arg("is_causal") = false, nb::arg("scale") = nb::none(),
      nb::arg("enable_gqa") = false,
      "softmax(q @ k.T * scale + mask) @ v over [..., seq, head_dim] (scale 1/sqrt(head_dim) by default).");
  f.def(
      "cross_entropy",
      [](const Value& input, const Value& target, int64_t ignore_index, const std::string& reduction,
         double label_smoothing) {
        CrossEntropyOptions options;
        options.ignore_index = ignore_index;
        options.reduction = reduction;
        options.label_smoothing = label_smoothing;
        return without_gil([&] { return F::cross_entropy(input, target, options); });
      },
      nb::arg("input"), nb::arg("target"), nb::kw_only(), nb::arg("ignore_index") = -100,
      nb::arg("reduction") = "mean", nb::arg("label_smoothing") = 0.0,
      "The cross-entropy of logits [N, C] against class indices [N] (vocabulary-sharded logits under "
      "loss_parallel()).");
  bind_utils(nn);
}

}  // namespace tessera::python
