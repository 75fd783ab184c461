// What module code passes around, between Python and C++: nn::Value (a ts.Tensor or a ts.DTensor,
// None for an absent optional operand) and lists of parameters (ts.nn.Parameter, ts.Tensor or
// ts.DTensor, as optimizers and clip_grad_norm_ take them).
#pragma once

#include <vector>

#include "bindings.hpp"

namespace tessera::python {

// An iterable of parameters (module.parameters(), a list of tensors) or a single one, each as a
// parameter handle: a ts.nn.Parameter keeps its slot, a tensor gets a slot of its own. `what`
// names the call in errors.
std::vector<nn::Parameter> parameters_from(nb::handle parameters, const char* what);

// normalized_shape as PyTorch takes it (layer_norm, rms_norm and their modules): an int or a
// sequence of ints; anything else is a TypeError naming what was given.
std::vector<int64_t> normalized_shape_from(nb::handle shape);

// A Value as Python sees it: a ts.Tensor (or ts.LocalTensor), a ts.DTensor, or None when undefined.
nb::object to_python(const nn::Value& value);

// Registers ts.nn.Parameter (nn_parameter.cpp), the modules (nn_module.cpp, nn_modules.cpp), the
// functional ops and utils (nn_functional.cpp) into the `nn` submodule.
void bind_nn_parameter(nb::module_& nn);
void bind_nn_module(nb::module_& nn);
void bind_nn_modules(nb::module_& nn);
void bind_nn_functional(nb::module_& nn);
void bind_models(nb::module_& m);      // ts._tessera.models: Transformer, TransformerArgs
void bind_optim(nb::module_& m);       // ts._tessera.optim: SGD, AdamW, lr_scheduler
void bind_parallel(nb::module_& m);    // ts._tessera.parallel: styles, parallelize_module, fully_shard
void bind_pipelining(nb::module_& m);  // ts._tessera.pipelining: PipelineStage, the schedules

}  // namespace tessera::python

// nn::Value converts from a ts.Tensor, a ts.DTensor, a ts.nn.Parameter (its current value) or None
// (undefined: an absent optional operand), and back to the first two (None when undefined).
namespace nanobind::detail {
template <>
struct type_caster<tessera::nn::Value> {
  NB_TYPE_CASTER(tessera::nn::Value, const_name("tessera._tessera.Tensor | tessera._tessera.DTensor | None"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    try {
      if (src.is_none()) {
        value = tessera::nn::Value();
      } else if (isinstance<tessera::DTensor>(src)) {
        value = cast<const tessera::DTensor&>(src);
      } else if (isinstance<tessera::Tensor>(src)) {
        value = cast<const tessera::Tensor&>(src);
      } else if (isinstance<tessera::nn::Parameter>(src)) {
        value = tessera::nn::Value(cast<const tessera::nn::Parameter&>(src));
      } else {
        return false;
      }
      return true;
    } catch (...) {
      return false;
    }
  }

  static handle from_cpp(const tessera::nn::Value& v, rv_policy, cleanup_list*) noexcept {
    try {
      return tessera::python::to_python(v).release();
    } catch (...) {
      return handle();
    }
  }
};
}  // namespace nanobind::detail
