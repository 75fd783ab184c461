// ts.nn.Module: the base of every module, with PyTorch's methods (parameters(), named_parameters()
// with dotted names, state_dict(), load_state_dict(strict=), train()/eval(), zero_grad(), to(dtype),
// __call__). Submodules, parameters and buffers read as attributes (model.layers[0].attention.wq),
// as in PyTorch. Modules live behind std::shared_ptr, so a module a parent owns stays valid from
// Python however long Python keeps it.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "nn_values.hpp"

namespace tessera::python {
namespace {

// PyTorch's _IncompatibleKeys: what a non-strict load_state_dict left out.
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

nb::dict to_python(const nn::StateDict& state) {
  nb::dict out;
  for (const auto& [name, value] : state) out[nb::str(name.c_str(), name.size())] = python::to_python(value);
  return out;
}

nn::StateDict state_dict_from(nb::handle mapping) {
  if (!nb::hasattr(mapping, "items"))
    throw nb::type_error(
        ("load_state_dict: state_dict must be a mapping of names to tensors (module.state_dict()), "
         "got " +
         describe(mapping))
            .c_str());
  nn::StateDict state;
  for (nb::handle item : nb::iter(mapping.attr("items")())) {
    nb::handle key = item[0];
    nb::handle value = item[1];
    if (!nb::isinstance<nb::str>(key))
      throw nb::type_error(("load_state_dict: keys must be str, got " + describe(key)).c_str());
    nn::Value v;
    if (!nb::try_cast(value, v) || !v.defined())
      throw nb::type_error(("load_state_dict: the value of '" + nb::cast<std::string>(key) +
                            "' must be a ts.Tensor or a ts.DTensor, got " + describe(value))
                               .c_str());
    state.insert(nb::cast<std::string>(key), v);
  }
  return state;
}

// A named item of the module itself (not its descendants): child, parameter, then buffer.
nb::object attribute_of(nn::Module& module, const std::string& name) {
  for (const auto& [child_name, child] : module.named_children())
    if (child_name == name) return nb::cast(child);
  for (const auto& [parameter_name, parameter] : module.named_parameters(false))
    if (parameter_name == name) return nb::cast(parameter);
  for (const auto& [buffer_name, buffer] : module.named_buffers(false))
    if (buffer_name == name) return nb::cast(buffer);
  throw nb::attribute_error(
      ("'" + module.name() + "' module has no attribute, submodule, parameter or buffer '" + name + "'")
          .c_str());
}

nb::list named_list(const auto& items) {
  nb::list out;
  for (const auto& [name, item] : items) out.append(nb::make_tuple(nb::str(name.c_str(), name.size()), item));
  return out;
}

}  // namespace

void bind_nn_module(nb::module_& nn) {
  nb::class_<IncompatibleKeys>(
      nn, "_IncompatibleKeys",
      "What load_state_dict(strict=False) left out: missing_keys and unexpected_keys.")
      .def_ro("missing_keys", &IncompatibleKeys::missing_keys, "The module's names the dict lacks.")
      .def_ro("unexpected_keys", &IncompatibleKeys::unexpected_keys, "The dict's names the module lacks.")
      .def("__repr__", [](const IncompatibleKeys& k) {
        return "_IncompatibleKeys(missing_keys=" + nb::cast<std::string>(nb::repr(nb::cast(k.missing_keys))) +
               ", unexpected_keys=" + nb::cast<std::string>(nb::repr(nb::cast(k.unexpected_keys))) + ")";
      });

  nb::class_<nn::Module>(
      nn, "Module",
      "The base of every module (PyTorch: torch.nn.Module): a tree of submodules owning named "
      "parameters and buffers, with dotted names from the root.")
      .def(
          "__call__",
          [](nb::handle self, nb::args args, nb::kwargs kwargs) {
            return self.attr("forward")(*args, **kwargs);
          },
          "Runs forward (and the hooks parallel styles and FSDP installed).")
      .def(
          "parameters", [](const nn::Module& m, bool recurse) { return m.parameters(recurse); },
          nb::arg("recurse") = true, "Every parameter, in registration order (PyTorch's order).")
      .def(
          "named_parameters",
          [](const nn::Module& m, const std::string& prefix, bool recurse) {
            nb::list out;
            for (const auto& [name, p] : m.named_parameters(recurse)) {
              const std::string full = prefix.empty() ? name : prefix + "." + name;
              out.append(nb::make_tuple(nb::str(full.c_str(), full.size()), p));
            }
            return out;
          },
          nb::arg("prefix") = "", nb::arg("recurse") = true,
          "(dotted name, parameter) pairs, e.g. ('layers.0.attention.wq.weight', p).")
      .def(
          "named_buffers",
          [](const nn::Module& m, bool recurse) { return named_list(m.named_buffers(recurse)); },
          nb::arg("recurse") = true, "(dotted name, tensor) pairs of the buffers.")
      .def(
          "buffers",
          [](const nn::Module& m, bool recurse) {
            std::vector<Tensor> out;
            for (const auto& [name, b] : m.named_buffers(recurse)) out.push_back(b);
            return out;
          },
          nb::arg("recurse") = true, "Every buffer, in registration order.")
      .def("children", &nn::Module::children, "The direct submodules.")
      .def(
          "named_children", [](const nn::Module& m) { return named_list(m.named_children()); },
          "(name, submodule) pairs of the direct submodules.")
      .def(
          "named_modules", [](nn::Module& m) { return named_list(m.named_modules()); },
          "Every module of the tree: this one first (named ''), then depth-first in registration order.")
      .def("modules", &nn::Module::modules, "Every module of the tree, this one first.")
      .def("get_submodule", &nn::Module::get_submodule, nb::arg("target"),
           "The module at a dotted path ('layers.0.attention'); '' is this one.")
      .def("get_parameter", &nn::Module::get_parameter, nb::arg("target"),
           "The parameter at a dotted path ('layers.0.attention.wq.weight').")
      .def(
          "state_dict", [](const nn::Module& m) { return to_python(m.state_dict()); },
          "Parameters and persistent buffers by dotted name (a dict, in registration order).")
      .def(
          "load_state_dict",
          [](nn::Module& m, nb::handle state_dict, bool strict) {
            const nn::StateDict state = state_dict_from(state_dict);
            nn::LoadStateDictResult result = without_gil([&] { return m.load_state_dict(state, strict); });
            return IncompatibleKeys{std::move(result.missing_keys), std::move(result.unexpected_keys)};
          },
          nb::arg("state_dict"), nb::arg("strict") = true,
          "Copies the values into the parameters and buffers in place; strict: a missing or unexpected key "
          "is an "
          "error naming them all.")
      .def(
          "train",
          [](nb::handle self, bool mode) {
            nb::cast<nn::Module&>(self).train(mode);
            return nb::borrow(self);
          },
          nb::arg("mode") = true, "Sets training mode on the whole tree; returns the module.")
      .def(
          "eval",
          [](nb::handle self) {
            nb::cast<nn::Module&>(self).eval();
            return nb::borrow(self);
          },
          "Sets evaluation mode on the whole tree; returns the module.")
      .def_prop_ro("training", &nn::Module::is_training, "Whether the module is in training mode.")
      .def("zero_grad", &nn::Module::zero_grad, nb::arg("set_to_none") = true,
           "Drops every parameter's gradient (zeroes it with set_to_none=False).")
      .def(
          "to",
          [](nb::handle self, DType dtype) {
            nn::Module& m = nb::cast<nn::Module&>(self);
            without_gil([&] { m.to(dtype); });
            return nb::borrow(self);
          },
          nb::arg("dtype"), "Casts every floating-point parameter and buffer in place; returns the module.")
      .def(
          "register_parameter",
          [](nn::Module& m, const std::string& name, const nn::Parameter& parameter) {
            return m.register_parameter(name, parameter, parameter.requires_grad());
          },
          nb::arg("name"), nb::arg("param"), "Adds a parameter under `name`; returns its handle.")
      .def("register_buffer", &nn::Module::register_buffer, nb::arg("name"), nb::arg("tensor"),
           nb::arg("persistent") = true, "Adds a buffer under `name` (persistent ones are in state_dict()).")
      .def(
          "register_module",
          [](nn::Module& m, const std::string& name, std::shared_ptr<nn::Module> module) {
            m.register_module(name, std::move(module));
          },
          nb::arg("name"), nb::arg("module"), "Adds a submodule under `name`.")
      .def("__getattr__", &attribute_of)
      .def("__repr__", &nn::Module::to_string)
      .def("extra_repr", &nn::Module::extra_repr, "The module's own settings, as its repr shows them.");
}

}  // namespace tessera::python
