// What Tensor and DTensor bindings share: binary operators that take a tensor, a DTensor or a
// number on either side, reductions over `dim`, and one definition for a method and its module
// function. Templated on the receiver (Tensor or DTensor) so each op is written once for both.
#pragma once

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "op_docs.hpp"

namespace tessera::python {

// Every binary op spelled once: a generic lambda picks tessera's overload for the operand types. Its
// return type is spelled out so that std::is_invocable sees which operand types have an overload.
#define TESSERA_PY_BINARY(fn) \
  [](const auto& x, const auto& y) -> decltype(tessera::fn(x, y)) { return tessera::fn(x, y); }
// Likewise a unary op and a reduction over dims.
#define TESSERA_PY_UNARY(fn) [](const auto& x) { return tessera::fn(x); }
#define TESSERA_PY_REDUCE(fn) \
  [](const auto& x, const std::vector<int64_t>& dims, bool keepdim) { return tessera::fn(x, dims, keepdim); }

// `op(a, b)` (or op(b, a) when `reflected`, Python's __radd__ and friends) with the GIL released,
// where `other` may be a DTensor, a Tensor or a number, as far as tessera has that overload.
// Anything else is NotImplemented, Python's way of giving the other operand its turn.
template <class Self, class Op>
nb::object binary(const Self& self, nb::handle other, Op op, bool reflected, const char* name) {
  const auto apply = [&](const auto& value) {
    return nb::cast(without_gil([&] { return reflected ? op(value, self) : op(self, value); }));
  };
  if constexpr (std::is_invocable_v<Op, const Self&, const DTensor&> &&
                std::is_invocable_v<Op, const DTensor&, const Self&>) {
    if (nb::isinstance<DTensor>(other)) return apply(nb::cast<const DTensor&>(other));
  }
  if constexpr (std::is_invocable_v<Op, const Self&, const Tensor&> &&
                std::is_invocable_v<Op, const Tensor&, const Self&>) {
    if (nb::isinstance<Tensor>(other)) return apply(nb::cast<const Tensor&>(other));
  }
  if constexpr (std::is_invocable_v<Op, const Self&, Scalar> &&
                std::is_invocable_v<Op, Scalar, const Self&>) {
    if (is_number(other)) return apply(scalar_from(other, name));
  }
  return nb::borrow(Py_NotImplemented);
}

// self.forward(other) and, when `reflected` is given, the reflected operator.
template <class Self, class Op>
void def_binary_method(nb::class_<Self>& cls, const char* forward, const char* reflected, Op op) {
  cls.def(
      forward, [op, forward](const Self& a, nb::handle b) { return binary(a, b, op, false, forward); },
      op_doc<Self>(forward));
  if (reflected != nullptr)
    cls.def(
        reflected, [op, reflected](const Self& a, nb::handle b) { return binary(a, b, op, true, reflected); },
        op_doc<Self>(reflected));
}

// + - * / as operators (reflected too) and as add/sub/mul/div methods, which Tensor and DTensor share.
template <class Self>
void def_arithmetic(nb::class_<Self>& cls) {
  const auto both = [&cls](const char* forward, const char* reflected, const char* method, auto op) {
    def_binary_method(cls, forward, reflected, op);
    def_binary_method(cls, method, nullptr, op);
  };
  both("__add__", "__radd__", "add", TESSERA_PY_BINARY(add));
  both("__sub__", "__rsub__", "sub", TESSERA_PY_BINARY(sub));
  both("__mul__", "__rmul__", "mul", TESSERA_PY_BINARY(mul));
  both("__truediv__", "__rtruediv__", "div", TESSERA_PY_BINARY(div));
  cls.def(
      "__neg__", [](const Self& t) { return without_gil([&] { return tessera::neg(t); }); },
      op_doc<Self>("__neg__"));
}

// ts.name(input, other): a Tensor or a DTensor on either side, a number on at most one. Its words are
// the Tensor op's, which say what a DTensor operand gives.
template <class Op>
void def_module_binary(nb::module_& m, const char* name, Op op) {
  m.def(
      name,
      [op, name](nb::handle a, nb::handle b) -> nb::object {
        nb::object out = nb::borrow(Py_NotImplemented);
        if (nb::isinstance<DTensor>(a))
          out = binary(nb::cast<const DTensor&>(a), b, op, false, name);
        else if (nb::isinstance<Tensor>(a))
          out = binary(nb::cast<const Tensor&>(a), b, op, false, name);
        if (out.is(Py_NotImplemented) && nb::isinstance<DTensor>(b))
          out = binary(nb::cast<const DTensor&>(b), a, op, true, name);
        else if (out.is(Py_NotImplemented) && nb::isinstance<Tensor>(b))
          out = binary(nb::cast<const Tensor&>(b), a, op, true, name);
        if (out.is(Py_NotImplemented))
          throw nb::type_error(
              (std::string("ts.") + name + ": no overload for " + describe(a) + " and " + describe(b) +
               "; it takes two tensors or two DTensors, or one with a number where the op allows")
                  .c_str());
        return out;
      },
      nb::arg("input"), nb::arg("other"), tensor_op_doc(name));
}

// A method on the class, or a module function whose first argument PyTorch names `input`.
template <class Target, class F, class... Extra>
void def_on(Target& target, const char* name, F&& f, const Extra&... extra) {
  if constexpr (std::is_same_v<Target, nb::module_>)
    target.def(name, std::forward<F>(f), nb::arg("input"), extra...);
  else
    target.def(name, std::forward<F>(f), extra...);
}

// reduce(t, dims, keepdim) over `dim` (an int, a sequence of ints, or None for every dim).
template <class Self, class Reduce>
void def_reduction(auto& target, const char* name, Reduce reduce) {
  def_on(
      target, name,
      [reduce, name](const Self& t, nb::handle dim, bool keepdim) {
        const std::vector<int64_t> dims = dims_from(dim, name);
        return without_gil([&] { return reduce(t, dims, keepdim); });
      },
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, op_doc<Self>(name));
}

// The elementwise functions and softmaxes both Tensor and DTensor have, as methods or functions.
template <class Self, class Target>
void def_elementwise(Target& target) {
  const auto unary = [&target](const char* name, auto fn) {
    def_on(
        target, name, [fn](const Self& t) { return without_gil([&] { return fn(t); }); }, op_doc<Self>(name));
  };
  unary("neg", TESSERA_PY_UNARY(neg));
  unary("abs", TESSERA_PY_UNARY(abs));
  unary("exp", TESSERA_PY_UNARY(exp));
  unary("log", TESSERA_PY_UNARY(log));
  unary("sqrt", TESSERA_PY_UNARY(sqrt));
  unary("relu", TESSERA_PY_UNARY(relu));
  unary("gelu", TESSERA_PY_UNARY(gelu));
  unary("tanh", TESSERA_PY_UNARY(tanh));
  unary("sigmoid", TESSERA_PY_UNARY(sigmoid));
  def_on(
      target, "softmax",
      [](const Self& t, int64_t d) { return without_gil([&] { return tessera::softmax(t, d); }); },
      nb::arg("dim"), op_doc<Self>("softmax"));
  def_on(
      target, "log_softmax",
      [](const Self& t, int64_t d) { return without_gil([&] { return tessera::log_softmax(t, d); }); },
      nb::arg("dim"), op_doc<Self>("log_softmax"));
}

// ts.matmul / mm / bmm of two Selfs, and ts.cat / ts.stack of a list of them.
template <class Self>
void def_products_and_joins(nb::module_& m) {
  const auto product = [&m](const char* name, const char* second, auto multiply) {
    m.def(
        name,
        [multiply](const Self& a, const Self& b) { return without_gil([&] { return multiply(a, b); }); },
        nb::arg("input"), nb::arg(second), op_doc<Self>(name));
  };
  product("matmul", "other", TESSERA_PY_BINARY(matmul));
  product("mm", "mat2", TESSERA_PY_BINARY(mm));
  product("bmm", "mat2", TESSERA_PY_BINARY(bmm));
  m.def(
      "cat",
      [](const std::vector<Self>& parts, int64_t dim) {
        return without_gil([&] { return tessera::cat(parts, dim); });
      },
      nb::arg("tensors"), nb::arg("dim") = 0, op_doc<Self>("cat"));
  m.def(
      "stack",
      [](const std::vector<Self>& parts, int64_t dim) {
        return without_gil([&] { return tessera::stack(parts, dim); });
      },
      nb::arg("tensors"), nb::arg("dim") = 0, op_doc<Self>("stack"));
}

// ts.empty_like / zeros_like / ones_like / full_like(input, ..., dtype=, device=) for a Self input.
template <class Self>
void def_like_factories(nb::module_& m) {
  const auto like = [&m](const char* name, auto make) {
    m.def(
        name,
        [make](const Self& t, std::optional<DType> dtype, std::optional<std::string> device) {
          const TensorOptions options = options_from(dtype, device);
          return without_gil([&] { return make(t, options); });
        },
        nb::arg("input"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
        op_doc<Self>(name));
  };
  like("empty_like", [](const Self& t, const TensorOptions& o) { return tessera::empty_like(t, o); });
  like("zeros_like", [](const Self& t, const TensorOptions& o) { return tessera::zeros_like(t, o); });
  like("ones_like", [](const Self& t, const TensorOptions& o) { return tessera::ones_like(t, o); });
  m.def(
      "full_like",
      [](const Self& t, nb::handle fill_value, std::optional<DType> dtype,
         std::optional<std::string> device) {
        const Scalar value = scalar_from(fill_value, "full_like");
        return without_gil([&] { return tessera::full_like(t, value, options_from(dtype, device)); });
      },
      nb::arg("input"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), op_doc<Self>("full_like"));
}

}  // namespace tessera::python
