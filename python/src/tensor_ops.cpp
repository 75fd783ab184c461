// Tensor arithmetic, comparisons, reductions and elementwise functions, as methods and operators
// and as module functions (which take DTensors too: operands.hpp dispatches on either operand).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "operands.hpp"
#include "tensor_ops.hpp"

namespace tessera::python {
namespace {

// max/min: over everything a 0-d tensor; over one dim (values, indices), as PyTorch returns.
template <class Reduce, class Arg>
auto extremum(Reduce reduce, Arg arg) {
  return [reduce, arg](const Tensor& t, std::optional<int64_t> dim, bool keepdim) -> nb::object {
    if (!dim) return nb::cast(without_gil([&] { return reduce(t, std::vector<int64_t>{}, false); }));
    auto [values, indices] = without_gil([&] {
      return std::make_pair(reduce(t, std::vector<int64_t>{*dim}, keepdim), arg(t, *dim, keepdim));
    });
    return nb::make_tuple(values, indices);
  };
}

template <class Arg>
auto arg_extremum(Arg arg) {
  return [arg](const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
    return without_gil([&] { return dim ? arg(t, *dim, keepdim) : arg(t); });
  };
}

Tensor max_of(const Tensor& t, const std::vector<int64_t>& d, bool k) { return tessera::max(t, d, k); }
Tensor min_of(const Tensor& t, const std::vector<int64_t>& d, bool k) { return tessera::min(t, d, k); }
// argmax/argmin over everything (an index into the flattened tensor) or along one dim.
struct ArgMax {
  Tensor operator()(const Tensor& t) const { return tessera::argmax(t); }
  Tensor operator()(const Tensor& t, int64_t d, bool k) const { return tessera::argmax(t, d, k); }
};
struct ArgMin {
  Tensor operator()(const Tensor& t) const { return tessera::argmin(t); }
  Tensor operator()(const Tensor& t, int64_t d, bool k) const { return tessera::argmin(t, d, k); }
};

template <class Target>
void def_reductions(Target& target) {
  def_reduction<Tensor>(target, "sum", TESSERA_PY_REDUCE(sum));
  def_reduction<Tensor>(target, "mean", TESSERA_PY_REDUCE(mean));
  def_reduction<Tensor>(target, "prod", TESSERA_PY_REDUCE(prod));
  def_reduction<Tensor>(target, "all", TESSERA_PY_REDUCE(all));
  def_reduction<Tensor>(target, "any", TESSERA_PY_REDUCE(any));
  const auto dim = nb::arg("dim") = nb::none();
  const auto keepdim = nb::arg("keepdim") = false;
  def_on(target, "max", extremum(max_of, ArgMax()), dim, keepdim, tensor_op_doc("max"));
  def_on(target, "min", extremum(min_of, ArgMin()), dim, keepdim, tensor_op_doc("min"));
  def_on(target, "argmax", arg_extremum(ArgMax()), dim, keepdim, tensor_op_doc("argmax"));
  def_on(target, "argmin", arg_extremum(ArgMin()), dim, keepdim, tensor_op_doc("argmin"));
  def_elementwise<Tensor>(target);
}

Tensor matmul_of(const Tensor& a, const Tensor& b) {
  return without_gil([&] { return tessera::matmul(a, b); });
}

}  // namespace

void bind_tensor_ops(nb::class_<Tensor>& tensor) {
  def_arithmetic(tensor);
  def_binary_method(tensor, "__pow__", "__rpow__", TESSERA_PY_BINARY(pow));
  def_binary_method(tensor, "__eq__", nullptr, TESSERA_PY_BINARY(eq));
  def_binary_method(tensor, "__ne__", nullptr, TESSERA_PY_BINARY(ne));
  def_binary_method(tensor, "__lt__", nullptr, TESSERA_PY_BINARY(lt));
  def_binary_method(tensor, "__le__", nullptr, TESSERA_PY_BINARY(le));
  def_binary_method(tensor, "__gt__", nullptr, TESSERA_PY_BINARY(gt));
  def_binary_method(tensor, "__ge__", nullptr, TESSERA_PY_BINARY(ge));
  def_binary_method(tensor, "pow", nullptr, TESSERA_PY_BINARY(pow));
  tensor.def("__matmul__", &matmul_of, tensor_op_doc("__matmul__"));
  tensor.def("matmul", &matmul_of, nb::arg("other"), tensor_op_doc("matmul"));
  def_reductions(tensor);
}

void bind_ops(nb::module_& m) {
  def_module_binary(m, "add", TESSERA_PY_BINARY(add));
  def_module_binary(m, "sub", TESSERA_PY_BINARY(sub));
  def_module_binary(m, "mul", TESSERA_PY_BINARY(mul));
  def_module_binary(m, "div", TESSERA_PY_BINARY(div));
  def_module_binary(m, "pow", TESSERA_PY_BINARY(pow));
  def_module_binary(m, "maximum", TESSERA_PY_BINARY(maximum));
  def_module_binary(m, "minimum", TESSERA_PY_BINARY(minimum));
  def_module_binary(m, "eq", TESSERA_PY_BINARY(eq));
  def_module_binary(m, "ne", TESSERA_PY_BINARY(ne));
  def_module_binary(m, "lt", TESSERA_PY_BINARY(lt));
  def_module_binary(m, "le", TESSERA_PY_BINARY(le));
  def_module_binary(m, "gt", TESSERA_PY_BINARY(gt));
  def_module_binary(m, "ge", TESSERA_PY_BINARY(ge));
  def_reductions(m);
  def_products_and_joins<Tensor>(m);
  m.def(
      "split",
      [](const Tensor& t, nb::handle split, int64_t dim) {
        if (PyLong_Check(split.ptr())) {
          const int64_t size = nb::cast<int64_t>(split);
          return without_gil([&] { return tessera::split(t, size, dim); });
        }
        const std::vector<int64_t> sizes = dims_from(split, "split");
        return without_gil([&] { return tessera::split(t, sizes, dim); });
      },
      nb::arg("tensor"), nb::arg("split_size_or_sections"), nb::arg("dim") = 0,
      "Views of tensor split along dim: pieces of split_size_or_sections elements (the last smaller), or of "
      "the "
      "listed sizes.");
  m.def(
      "chunk",
      [](const Tensor& t, int64_t chunks, int64_t dim) {
        return without_gil([&] { return tessera::chunk(t, chunks, dim); });
      },
      nb::arg("input"), nb::arg("chunks"), nb::arg("dim") = 0,
      "Views of input split along dim into at most `chunks` pieces of ceil(size / chunks) elements (the last "
      "smaller), as torch.chunk.");
  m.def(
      "equal",
      [](const Tensor& a, const Tensor& b) { return without_gil([&] { return tessera::equal(a, b); }); },
      nb::arg("input"), nb::arg("other"),
      "Whether the two tensors have the same shape and elements (a Python bool); for local tensors, True "
      "only "
      "when that holds on every rank.");
  m.def(
      "allclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol) {
        return without_gil([&] { return tessera::allclose(a, b, rtol, atol); });
      },
      nb::arg("input"), nb::arg("other"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8,
      "Whether |input - other| <= atol + rtol * |other| for every element (a Python bool), as "
      "torch.allclose; "
      "for local tensors, True only when that holds on every rank.");
}

}  // namespace tessera::python
