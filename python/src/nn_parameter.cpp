// ts.nn.Parameter: a handle to a module's parameter slot. The slot holds a ts.Tensor, or a
// ts.DTensor once a parallel style or fully_shard laid it out; every handle sees the value the
// slot holds now. Attributes a Parameter lacks are looked up on that value, so p.full_tensor(),
// p.to_local() or p.numpy() read as on PyTorch's Parameter (a tensor subclass).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "nn_values.hpp"

namespace tessera::python {

nb::object to_python(const nn::Value& value) {
  if (!value.defined()) return nb::none();
  if (value.is_dtensor()) return nb::cast(value.dtensor());
  return nb::cast(value.tensor());
}

namespace {

nb::object value_of(const nn::Parameter& p) {
  if (p.is_dtensor()) return nb::cast(p.dtensor());
  return nb::cast(p.tensor());
}

nb::object grad_of(const nn::Parameter& p) {
  if (!p.has_grad()) return nb::none();
  if (p.is_dtensor()) return nb::cast(p.dtensor_grad());
  return nb::cast(p.grad());
}

nn::Parameter parameter_from(nb::handle item, const char* what, size_t index) {
  if (nb::isinstance<nn::Parameter>(item)) return nb::cast<nn::Parameter>(item);
  if (nb::isinstance<DTensor>(item)) return nn::Parameter(nb::cast<DTensor>(item));
  if (nb::isinstance<Tensor>(item)) return nn::Parameter(nb::cast<Tensor>(item));
  throw nb::type_error((std::string(what) + ": parameter " + std::to_string(index) +
                        " must be a ts.nn.Parameter, ts.Tensor or ts.DTensor, got " + describe(item))
                           .c_str());
}

}  // namespace

std::vector<nn::Parameter> parameters_from(nb::handle parameters, const char* what) {
  if (nb::isinstance<nn::Parameter>(parameters) || nb::isinstance<Tensor>(parameters) ||
      nb::isinstance<DTensor>(parameters))
    return {parameter_from(parameters, what, 0)};
  if (!nb::hasattr(parameters, "__iter__"))
    throw nb::type_error((std::string(what) +
                          ": expected an iterable of parameters (module.parameters()), got " +
                          describe(parameters))
                             .c_str());
  std::vector<nn::Parameter> out;
  for (nb::handle item : nb::iter(parameters)) out.push_back(parameter_from(item, what, out.size()));
  return out;
}

void bind_nn_parameter(nb::module_& nn) {
  nb::class_<nn::Parameter>(
      nn, "Parameter",
      "A module's parameter (PyTorch: torch.nn.Parameter): a handle to a slot holding a "
      "ts.Tensor or a ts.DTensor. Attributes it lacks are those of its current value.")
      .def(
          "__init__",
          [](nn::Parameter* self, nb::handle data, bool requires_grad) {
            nn::Parameter p = parameter_from(data, "nn.Parameter", 0);
            p.set_requires_grad(requires_grad);
            new (self) nn::Parameter(p);
          },
          nb::arg("data"), nb::arg("requires_grad") = true,
          "A new parameter slot holding `data` (a ts.Tensor or ts.DTensor, shared, not copied).")
      .def_prop_ro("data", &value_of, "The value the slot holds now: a ts.Tensor or a ts.DTensor.")
      .def_prop_ro("is_dtensor", &nn::Parameter::is_dtensor, "Whether the slot holds a ts.DTensor.")
      .def_prop_ro(
          "shape", [](const nn::Parameter& p) { return nb::tuple(nb::cast(p.shape())); },
          "The global shape (a DTensor's, not its shard's).")
      .def_prop_ro("dtype", &nn::Parameter::dtype)
      .def("numel", &nn::Parameter::numel, "The number of elements of the global value.")
      .def(
          "size", [](const nn::Parameter& p) { return nb::tuple(nb::cast(p.shape())); },
          "The global shape, as a tuple.")
      .def_prop_rw("requires_grad", &nn::Parameter::requires_grad,
                   [](const nn::Parameter& p, bool value) { p.set_requires_grad(value); })
      .def(
          "requires_grad_", [](const nn::Parameter& p, bool value) { return p.set_requires_grad(value); },
          nb::arg("requires_grad") = true, "Sets requires_grad in place; returns the parameter.")
      .def_prop_ro("grad", &grad_of, "The gradient with the parameter's layout, or None.")
      .def_prop_ro("is_leaf", &nn::Parameter::is_leaf)
      .def(
          "zero_grad", [](const nn::Parameter& p, bool set_to_none) { p.zero_grad(set_to_none); },
          nb::arg("set_to_none") = true, "Drops the gradient (or zeroes it with set_to_none=False).")
      .def("same_slot", &nn::Parameter::same_slot, nb::arg("other"),
           "Whether two handles name the same parameter slot.")
      .def("__getattr__",
           [](const nn::Parameter& p, const std::string& name) -> nb::object {
             if (name.rfind("__", 0) == 0) throw nb::attribute_error(name.c_str());
             return value_of(p).attr(name.c_str());
           })
      .def("__repr__", &nn::Parameter::to_string);
}

}  // namespace tessera::python
