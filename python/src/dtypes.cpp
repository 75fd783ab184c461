// Element types as PyTorch spells them: ts.float32, ts.int64, ts.bool, ... (repr "tessera.float32").
#include <nanobind/stl/string.h>

#include "bindings.hpp"

namespace tessera::python {

void bind_dtypes(nb::module_& m) {
  nb::enum_<DType> dtype(m, "dtype",
                         "A tensor's element type (PyTorch: torch.dtype): ts.float32, ts.int64, ...");
  dtype.value("bool", kBool)
      .value("int32", kInt32)
      .value("int64", kInt64)
      .value("float32", kFloat32)
      .value("float64", kFloat64)
      .value("bfloat16", kBFloat16)
      .value("float16", kFloat16)
      .value("int8", kInt8)
      .value("uint8", kUInt8);
  for (const char* name :
       {"bool", "int32", "int64", "float32", "float64", "bfloat16", "float16", "int8", "uint8"})
    m.attr(name) = dtype.attr(name);
  // PyTorch's other names for the same types.
  m.attr("float") = m.attr("float32");
  m.attr("double") = m.attr("float64");
  m.attr("int") = m.attr("int32");
  m.attr("long") = m.attr("int64");
  m.attr("half") = m.attr("float16");
  dtype.def("__repr__", [](DType d) { return "tessera." + std::string(dtype_name(d)); });
  dtype.def("__str__", [](DType d) { return "tessera." + std::string(dtype_name(d)); });
  dtype.def_prop_ro("is_floating_point", [](DType d) { return is_floating(d); });
  dtype.def_prop_ro("itemsize", [](DType d) { return itemsize(d); });
}

}  // namespace tessera::python
