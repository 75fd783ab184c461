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

// PyTorch's LocalIntNode methods (a.add(b), a.mul(b), ...): like the operators, but the result is
// always a LocalInt over a's ranks, even where every rank's value is the same. `other` is an int or
// a LocalInt over the same ranks.
template <class Op>
LocalInt node_op(const LocalInt& a, nb::handle other, Op op, const char* what) {
  std::map<int, int64_t> out;
  if (nb::isinstance<LocalInt>(other)) {
    const LocalInt& b = nb::cast<const LocalInt&>(other);
    if (b.ranks() != a.ranks())
      throw Error(std::string("LocalInt.") + what + ": the operands have different ranks, " +
                  a.ranks().to_string() + " and " + b.ranks().to_string() +
                  "; they must have the same ranks");
    for (int r : a.ranks()) out[r] = op(a.at(r), b.at(r));
  } else if (PyLong_Check(other.ptr()) && !PyBool_Check(other.ptr())) {
    const auto b = nb::cast<int64_t>(other);
    for (int r : a.ranks()) out[r] = op(a.at(r), b);
  } else {
    throw nb::type_error(
        (std::string("LocalInt.") + what + ": expected an int or a LocalInt, got " + describe(other))
            .c_str());
  }
  return LocalInt(out);
}

int64_t checked_floordiv(int64_t a, int64_t b) { return floordiv(SymInt(a), SymInt(b)).as_int(); }
int64_t checked_mod(int64_t a, int64_t b) { return mod(SymInt(a), SymInt(b)).as_int(); }

}  // namespace

void bind_sym_int(nb::module_& m) {
  nb::class_<LocalInt>(m, "LocalInt", "An int whose value differs per rank: ts.LocalInt({0: 10, 1: 20}).")
      .def(nb::init<const std::map<int, int64_t>&>(), nb::arg("values"))
      .def("values", &LocalInt::values, "The value on each rank, as a dict.")
      .def_prop_ro("ranks", [](const LocalInt& v) { return v.ranks().ranks(); })
      .def("at", &LocalInt::at, nb::arg("rank"),
           "The value on one rank; a ts.Error naming the rank when it holds none.")
      .def("__getitem__", &LocalInt::at, nb::arg("rank"))
      .def("is_uniform", &LocalInt::is_uniform, "Whether every rank holds the same value.")
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
      .def("__hash__", [](const LocalInt& v) { return std::hash<std::string>()(v.to_string()); })
      // PyTorch's LocalIntNode spellings.
      .def_prop_ro("_local_ints", &LocalInt::values,
                   "The value on each rank, as a dict (PyTorch: LocalIntNode).")
      .def(
          "add", [](const LocalInt& a, nb::handle b) { return node_op(a, b, std::plus<int64_t>(), "add"); },
          nb::arg("other"), "Rank by rank a + other, as a LocalInt.")
      .def(
          "sub", [](const LocalInt& a, nb::handle b) { return node_op(a, b, std::minus<int64_t>(), "sub"); },
          nb::arg("other"), "Rank by rank a - other, as a LocalInt.")
      .def(
          "mul",
          [](const LocalInt& a, nb::handle b) { return node_op(a, b, std::multiplies<int64_t>(), "mul"); },
          nb::arg("other"), "Rank by rank a * other, as a LocalInt.")
      .def(
          "floordiv",
          [](const LocalInt& a, nb::handle b) { return node_op(a, b, checked_floordiv, "floordiv"); },
          nb::arg("other"), "Rank by rank a // other (rounding toward negative infinity), as a LocalInt.")
      .def(
          "mod", [](const LocalInt& a, nb::handle b) { return node_op(a, b, checked_mod, "mod"); },
          nb::arg("other"), "Rank by rank a % other (with other's sign, as Python's %), as a LocalInt.")
      .def(
          "neg",
          [](const LocalInt& a) {
            return node_op(
                a, nb::int_(0), [](int64_t x, int64_t) { return -x; }, "neg");
          },
          "Rank by rank -a, as a LocalInt.")
      .def(
          "clone", [](const LocalInt& a) { return a; }, "A copy (LocalInt values never change).");
  m.def(
      "sym_max",
      [](nb::handle a, nb::handle b) { return to_python(sym_max(sym_int_from(a), sym_int_from(b))); },
      nb::arg("a"), nb::arg("b"),
      "The larger of two sizes (ints or ts.LocalInts), rank by rank (PyTorch: torch.sym_max).");
  m.def(
      "sym_min",
      [](nb::handle a, nb::handle b) { return to_python(sym_min(sym_int_from(a), sym_int_from(b))); },
      nb::arg("a"), nb::arg("b"),
      "The smaller of two sizes (ints or ts.LocalInts), rank by rank (PyTorch: torch.sym_min).");
}

}  // namespace tessera::python
