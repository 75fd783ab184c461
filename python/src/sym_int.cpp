// ts.LocalInt: an int that differs per rank (PyTorch: LocalIntNode), as shard sizes do.
#include <nanobind/operators.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// Arithmetic with an int or another LocalInt; the result is an int when it is the same on every rank.
template <class Op>
nb::object combine(nb::handle a, nb::handle b, Op op) {
  return to_python(op(sym_int_from(a), sym_int_from(b)));
}

}  // namespace

void bind_sym_int(nb::module_& m) {
  nb::class_<LocalInt>(m, "LocalInt", "An int whose value differs per rank: ts.LocalInt({0: 10, 1: 20}).")
      .def(nb::init<const std::map<int, int64_t>&>(), nb::arg("values"))
      .def("values", &LocalInt::values, "The value on each rank, as a dict.")
      .def_prop_ro("ranks", [](const LocalInt& v) { return v.ranks().ranks(); })
      .def("at", &LocalInt::at, nb::arg("rank"))
      .def("__getitem__", &LocalInt::at, nb::arg("rank"))
      .def("is_uniform", &LocalInt::is_uniform)
      .def("__int__", [](const LocalInt& v) { return SymInt(v).as_int(); })
      .def("__repr__", [](const LocalInt& v) { return "LocalInt(" + v.to_string() + ")"; })
      .def("__add__", [](nb::handle a, nb::handle b) { return combine(a, b, std::plus<>()); })
      .def("__radd__", [](nb::handle a, nb::handle b) { return combine(b, a, std::plus<>()); })
      .def("__sub__", [](nb::handle a, nb::handle b) { return combine(a, b, std::minus<>()); })
      .def("__rsub__", [](nb::handle a, nb::handle b) { return combine(b, a, std::minus<>()); })
      .def("__mul__", [](nb::handle a, nb::handle b) { return combine(a, b, std::multiplies<>()); })
      .def("__rmul__", [](nb::handle a, nb::handle b) { return combine(b, a, std::multiplies<>()); })
      .def("__floordiv__", [](nb::handle a, nb::handle b) { return combine(a, b, floordiv); })
      .def("__rfloordiv__", [](nb::handle a, nb::handle b) { return combine(b, a, floordiv); })
      .def("__mod__", [](nb::handle a, nb::handle b) { return combine(a, b, mod); })
      .def("__rmod__", [](nb::handle a, nb::handle b) { return combine(b, a, mod); })
      .def("__neg__", [](const LocalInt& v) { return to_python(-SymInt(v)); })
      .def("__eq__", [](nb::handle a, nb::handle b) { return sym_int_from(a) == sym_int_from(b); })
      .def("__ne__", [](nb::handle a, nb::handle b) { return sym_int_from(a) != sym_int_from(b); })
      .def("__hash__", [](const LocalInt& v) { return std::hash<std::string>()(v.to_string()); });
  m.def("sym_max", [](nb::handle a, nb::handle b) { return to_python(sym_max(sym_int_from(a), sym_int_from(b))); });
  m.def("sym_min", [](nb::handle a, nb::handle b) { return to_python(sym_min(sym_int_from(a), sym_int_from(b))); });
}

}  // namespace tessera::python
