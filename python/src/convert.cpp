// Python values <-> Tessera's C++ values, shared by every binding (declared in bindings.hpp).
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

std::string python_type_name(nb::handle value) {
  return nb::cast<std::string>(nb::str(value.type().attr("__name__")));
}

}  // namespace

std::string describe(nb::handle value) {
  // A tensor's repr runs over many lines: its type says enough then.
  const std::string text = nb::cast<std::string>(nb::repr(value));
  if (text.size() > 60 || text.find('\n') != std::string::npos) return python_type_name(value);
  return python_type_name(value) + " " + text;
}

bool is_number(nb::handle value) {
  return PyBool_Check(value.ptr()) || PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()) ||
         nb::isinstance<LocalInt>(value) || PyIndex_Check(value.ptr()) || PyNumber_Check(value.ptr());
}

SymInt sym_int_from(nb::handle value) {
  if (nb::isinstance<LocalInt>(value)) return SymInt(nb::cast<const LocalInt&>(value));
  // bool is an int in Python, but a size of True is surely a mistake.
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) return SymInt(nb::cast<int64_t>(value));
  if (PyIndex_Check(value.ptr()) && !PyBool_Check(value.ptr()))  // numpy integers
    return SymInt(nb::cast<int64_t>(nb::steal(PyNumber_Index(value.ptr()))));
  throw nb::type_error(("expected an int or a ts.LocalInt for a size, got " + describe(value)).c_str());
}

nb::object to_python(const SymInt& value) {
  if (value.is_local()) return nb::cast(value.local());
  return nb::int_(value.as_int());
}

SymShape shape_from_sequence(nb::handle sequence, const char* what) {
  if (!PySequence_Check(sequence.ptr()) || PyUnicode_Check(sequence.ptr()))
    throw nb::type_error(
        (std::string(what) + ": expected a shape (a tuple or list of ints), got " + describe(sequence))
            .c_str());
  std::vector<SymInt> sizes;
  for (nb::handle size : nb::iter(sequence)) sizes.push_back(sym_int_from(size));
  return SymShape(std::move(sizes));
}

SymShape shape_from_args(const nb::args& args, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr()) && !nb::isinstance<LocalInt>(args[0]))
    return shape_from_sequence(args[0], what);
  return shape_from_sequence(args, what);
}

nb::tuple to_python(const SymShape& shape) {
  nb::list sizes;
  for (const SymInt& size : shape) sizes.append(to_python(size));
  return nb::tuple(sizes);
}

std::vector<int64_t> dims_from(nb::handle dims, const char* what) {
  if (dims.is_none()) return {};
  if (PyLong_Check(dims.ptr())) return {nb::cast<int64_t>(dims)};
  if (!PySequence_Check(dims.ptr()))
    throw nb::type_error((std::string(what) + ": expected dim to be an int, a tuple of ints or None, got " +
                          python_type_name(dims))
                             .c_str());
  std::vector<int64_t> out;
  for (nb::handle d : nb::iter(dims)) out.push_back(nb::cast<int64_t>(d));
  return out;
}

Scalar scalar_from(nb::handle value, const char* what) {
  if (PyBool_Check(value.ptr())) return Scalar(value.ptr() == Py_True);
  if (PyLong_Check(value.ptr())) return Scalar(nb::cast<int64_t>(value));
  if (PyFloat_Check(value.ptr())) return Scalar(nb::cast<double>(value));
  if (nb::isinstance<LocalInt>(value)) return Scalar(SymInt(nb::cast<const LocalInt&>(value)));
  if (PyIndex_Check(value.ptr())) return Scalar(nb::cast<int64_t>(nb::steal(PyNumber_Index(value.ptr()))));
  if (PyNumber_Check(value.ptr())) {  // numpy floats and other real numbers
    const double number = PyFloat_AsDouble(value.ptr());
    if (!PyErr_Occurred()) return Scalar(number);
    PyErr_Clear();
  }
  throw nb::type_error((std::string(what) +
                        ": expected a number (bool, int or float) or a ts.LocalInt, got " + describe(value))
                           .c_str());
}

nb::object to_python(const Scalar& value) {
  if (value.is_local()) return nb::cast(value.local());
  switch (value.kind()) {
    case Scalar::Kind::Bool:
      return nb::bool_(value.to_bool());
    case Scalar::Kind::Int:
      return nb::int_(value.to_int());
    case Scalar::Kind::Float:
      break;
  }
  return nb::float_(value.to_double());
}

TensorOptions options_from(const std::optional<DType>& dtype, const std::optional<std::string>& device) {
  TensorOptions options;
  if (dtype) options.dtype(*dtype);
  if (device) options.backend(*device);
  return options;
}

}  // namespace tessera::python
