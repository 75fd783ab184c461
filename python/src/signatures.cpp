// inspect.signature(f) for every bound function: nanobind's function objects carry their signature
// as text (__nb_signature__) but not the __signature__ that inspect reads. ts._install_signatures
// adds it, once at import, as a property of nanobind's three function types (functions, methods,
// bound methods) whose getters (tessera/_signatures.py) build the inspect.Signature from that text
// when asked. Calls are untouched: the property is read only by whoever asks for a signature.
#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// nanobind's function types are immutable from Python (type.__setattr__ refuses them), so the
// property goes into the type's dict directly, after which the type's attribute cache is reset.
// Other nanobind extensions loaded in the same interpreter may share these types and gain the
// property too, which only adds a signature to their functions as well.
void add_property(nb::handle type, nb::handle getter) {
  const std::string name = nb::cast<std::string>(nb::str(type.attr("__name__")));
  auto* heap_type = reinterpret_cast<PyTypeObject*>(type.ptr());
  if (name.rfind("nb_", 0) != 0 || heap_type->tp_dict == nullptr)
    throw Error("ts._install_signatures: " + name + " is not one of nanobind's function types");
  nb::object property = nb::module_::import_("builtins").attr("property")(getter);
  if (PyDict_SetItemString(heap_type->tp_dict, "__signature__", property.ptr()) != 0)
    throw nb::python_error();
  PyType_Modified(heap_type);
}

}  // namespace

void bind_signatures(nb::module_& m) {
  m.def(
      "_install_signatures",
      [m](nb::callable of_function, nb::callable of_bound_method) {
        nb::handle tensor_type = m.attr("Tensor");
        add_property(m.attr("ones").type(), of_function);  // module functions
        add_property(nb::handle(tensor_type.attr("__dict__")["numel"]).type(), of_function);  // methods
        add_property(nb::cast(Tensor()).attr("numel").type(), of_bound_method);               // bound methods
      },
      nb::arg("of_function"), nb::arg("of_bound_method"),
      "Makes inspect.signature work on every bound function (called once by tessera/__init__.py).");
}

}  // namespace tessera::python
