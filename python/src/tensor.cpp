// ts.Tensor: a dense tensor or a local tensor (one shard per rank), with PyTorch's spellings.
// Every call that computes runs without the GIL (ranks may run on other threads).
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "tensor_indexing.hpp"
#include "tensor_ops.hpp"

namespace tessera::python {
namespace {

// `t` as nested Python lists (PyTorch: tolist); a 0-d tensor gives its value.
template <class T>
nb::object nested(const std::vector<T>& values, const Shape& shape, size_t dim, size_t& next) {
  if (dim == shape.size()) return nb::cast(values[next++]);
  nb::list out;
  for (int64_t i = 0; i < shape[dim]; ++i) out.append(nested(values, shape, dim + 1, next));
  return out;
}

nb::object tolist(const Tensor& t) {
  const Shape shape = t.sizes();
  size_t next = 0;
  switch (t.dtype()) {
    case DType::Bool:
      return nested(t.to_vector<bool>(), shape, 0, next);
    case DType::Int32:
      return nested(t.to_vector<int32_t>(), shape, 0, next);
    case DType::Int64:
      return nested(t.to_vector<int64_t>(), shape, 0, next);
    case DType::Float32:
    case DType::BFloat16:  // float32 holds every bfloat16 and float16 value exactly
    case DType::Float16:
      return nested(t.to_vector<float>(), shape, 0, next);
    case DType::Int8:
    case DType::UInt8:
      return nested(t.to_vector<int64_t>(), shape, 0, next);
    case DType::Float64:
      break;
  }
  return nested(t.to_vector<double>(), shape, 0, next);
}

nb::object optional_tensor(const Tensor& t) { return t.defined() ? nb::cast(t) : nb::none(); }

// t.to(...): a dtype, a device (backend) name, or both as keywords, as PyTorch takes them.
Tensor convert(const Tensor& t, nb::handle target, std::optional<DType> dtype,
               std::optional<std::string> device) {
  if (!target.is_none()) {
    if (nb::isinstance<DType>(target)) {
      dtype = nb::cast<DType>(target);
    } else if (PyUnicode_Check(target.ptr())) {
      device = nb::cast<std::string>(target);
    } else if (nb::isinstance<Tensor>(target)) {
      const Tensor& like = nb::cast<const Tensor&>(target);  // t.to(other): other's dtype and backend
      dtype = like.dtype();
      device = like.backend();
    } else {
      throw nb::type_error("t.to(...): expected a ts.dtype, a device name or a tensor");
    }
  }
  return without_gil([&] {
    Tensor out = device ? t.to(*device) : t;
    return dtype ? out.to(*dtype) : out;
  });
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor> tensor(m, "Tensor", "A dense tensor, or a local tensor holding one shard per rank.");
  tensor.def_prop_ro("shape", [](const Tensor& t) { return to_python(t.shape()); })
      .def(
          "size",
          [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
            if (dim) return to_python(t.sym_size(*dim));
            return to_python(t.shape());
          },
          nb::arg("dim") = nb::none(),
          "The shape as a tuple, or the size of one dim; a size that differs per rank (a local tensor with "
          "uneven shards) is a ts.LocalInt.")
      .def(
          "stride",
          [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
            if (!dim) return nb::tuple(nb::cast(t.strides()));
            return nb::int_(t.strides().at(static_cast<size_t>(*dim < 0 ? *dim + t.dim() : *dim)));
          },
          nb::arg("dim") = nb::none(),
          "The strides in elements as a tuple, or one dim's; a local tensor has per-rank strides, so ask a "
          "shard (t.shard(rank).stride()).")
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::backend, "The backend holding the tensor, e.g. 'cpu'.")
      .def_prop_ro("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim, "The number of dims (the same on every rank of a local tensor).")
      .def("numel", &Tensor::numel,
           "The number of elements (of each rank's shard for a local tensor; an error when they differ per "
           "rank).")
      .def(
          "element_size", [](const Tensor& t) { return itemsize(t.dtype()); },
          "The size of one element in bytes.")
      .def("is_contiguous", &Tensor::is_contiguous,
           "Whether the elements lie in row-major order without gaps (for a local tensor: every rank's "
           "shard).")
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.sym_size(0).as_int();
           })
      .def("__repr__", &Tensor::to_string)
      // Local tensors (PyTorch: LocalTensor)
      .def_prop_ro("is_local", &Tensor::is_local)
      .def_prop_ro("ranks", [](const Tensor& t) { return t.ranks().ranks(); })
      .def("shard", &Tensor::shard, nb::arg("rank"), "Rank's dense shard (shares its memory).")
      .def(
          "shards",
          [](const Tensor& t) {
            std::map<int, Tensor> out;
            for (const auto& [rank, shard] : t.shards()) out.emplace(rank, shard);
            return out;
          },
          "Every rank's shard, as a dict.")
      .def(
          "reconcile", [](const Tensor& t) { return without_gil([&] { return t.reconcile(); }); },
          "The one value every rank holds; an error naming the first differing rank otherwise.")
      // Values
      .def(
          "item", [](const Tensor& t) { return to_python(without_gil([&] { return t.item(); })); },
          "The value of a one-element tensor as a Python number; for a local tensor, the value every rank "
          "holds "
          "(an error naming the ranks when they differ).")
      .def("tolist", &tolist,
           "The values as nested Python lists (a number for a 0-d tensor); a local tensor must hold the same "
           "values on every rank.")
      .def("__float__", [](const Tensor& t) { return without_gil([&] { return t.item().to_double(); }); })
      .def("__int__", [](const Tensor& t) { return without_gil([&] { return t.item().to_int(); }); })
      // operator.index(t): an integer tensor of one element used where Python wants an int (a slice
      // bound, a size), as in PyTorch; a float, bool or local tensor is refused.
      .def("__index__",
           [](const Tensor& t) {
             const DType d = t.dtype();
             const bool integral =
                 d == DType::Int8 || d == DType::UInt8 || d == DType::Int32 || d == DType::Int64;
             if (!integral || t.is_local() || t.numel() != 1)
               throw nb::type_error(
                   ("only integer tensors of a single element can be converted to an index, got a " +
                    (t.is_local() ? std::string("local ") : std::string(dtype_name(d)) + " ") +
                    "tensor of shape " + t.shape().to_string())
                       .c_str());
             return without_gil([&] { return t.item().to_int(); });
           })
      .def("__bool__", [](const Tensor& t) { return without_gil([&] { return t.item().to_bool(); }); })
      .def("__getitem__", &index_tensor)
      .def("__setitem__", &assign_index)
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<std::uintptr_t>(self.ptr()); })
      .def(
          "copy_",
          [](Tensor& t, const Tensor& src) -> Tensor& {
            return without_gil([&]() -> Tensor& { return t.copy_(src); });
          },
          nb::arg("src"), nb::rv_policy::reference_internal,
          "Copies src's values into this tensor in place (broadcasting, converting the dtype) and returns "
          "it; "
          "local tensors copy rank by rank.")
      .def(
          "fill_",
          [](Tensor& t, nb::handle value) -> Tensor& {
            const Scalar v = scalar_from(value, "fill_");
            return without_gil([&]() -> Tensor& { return t.fill_(v); });
          },
          nb::arg("value"), nb::rv_policy::reference_internal,
          "Sets every element to value in place and returns the tensor; a ts.LocalInt value fills each "
          "rank's "
          "shard with that rank's number.")
      .def(
          "zero_", [](Tensor& t) -> Tensor& { return without_gil([&]() -> Tensor& { return t.fill_(0); }); },
          nb::rv_policy::reference_internal, "Sets every element to zero in place and returns the tensor.")
      // Conversions
      .def("to", &convert, nb::arg("target") = nb::none(), nb::kw_only(), nb::arg("dtype") = nb::none(),
           nb::arg("device") = nb::none(),
           "This tensor in another dtype and/or on another device (backend name), or like another tensor's; "
           "the same memory (no copy) when nothing changes, as in PyTorch.")
      .def(
          "float", [](const Tensor& t) { return without_gil([&] { return t.to(kFloat32); }); },
          "This tensor as float32 (the same memory when it already is).")
      .def(
          "double", [](const Tensor& t) { return without_gil([&] { return t.to(kFloat64); }); },
          "This tensor as float64 (the same memory when it already is).")
      .def(
          "int", [](const Tensor& t) { return without_gil([&] { return t.to(kInt32); }); },
          "This tensor as int32 (the same memory when it already is); floats round toward zero.")
      .def(
          "long", [](const Tensor& t) { return without_gil([&] { return t.to(kInt64); }); },
          "This tensor as int64 (the same memory when it already is); floats round toward zero.")
      .def(
          "bool", [](const Tensor& t) { return without_gil([&] { return t.to(kBool); }); },
          "This tensor as bool: True where an element is nonzero.")
      .def(
          "clone", [](const Tensor& t) { return without_gil([&] { return t.clone(); }); },
          "A copy in new memory (every rank's shard copied, for a local tensor); gradients flow back through "
          "it.")
      .def(
          "contiguous", [](const Tensor& t) { return without_gil([&] { return t.contiguous(); }); },
          "This tensor (the same memory) when it is contiguous, else a row-major copy.")
      .def("detach", &Tensor::detach,
           "A tensor sharing this one's memory but cut from the autograd graph (requires_grad False).")
      // Views
      .def(
          "view", [](const Tensor& t, nb::args shape) { return t.view(shape_from_args(shape, "view")); },
          "A view with a new shape over the same memory (one size may be -1; sizes may be ts.LocalInts); an "
          "error when the strides do not allow it (use reshape).")
      .def(
          "reshape",
          [](const Tensor& t, nb::args shape) {
            const SymShape s = shape_from_args(shape, "reshape");
            return without_gil([&] { return t.reshape(s); });
          },
          "The same elements in a new shape (one size may be -1): a view where the strides allow, else a "
          "copy.")
      .def(
          "expand",
          [](const Tensor& t, nb::args shape) { return t.expand(shape_from_args(shape, "expand")); },
          "A view that repeats size-1 dims to the given sizes without copying (-1 keeps a size).")
      .def(
          "permute",
          [](const Tensor& t, nb::args dims) {
            std::vector<int64_t> order;
            for (const SymInt& d : shape_from_args(dims, "permute")) order.push_back(d.as_int());
            return t.permute(order);
          },
          "A view with the dims in the given order.")
      .def("transpose", &Tensor::transpose, nb::arg("dim0"), nb::arg("dim1"),
           "A view with dims dim0 and dim1 swapped.")
      .def("t", &Tensor::t, "The transpose of a tensor of at most 2 dims (a view).")
      .def_prop_ro("T",
                   [](const Tensor& t) {
                     std::vector<int64_t> reversed;
                     for (int64_t d = t.dim(); d-- > 0;) reversed.push_back(d);
                     return t.permute(reversed);
                   })
      .def("flatten", &Tensor::flatten, nb::arg("start_dim") = 0, nb::arg("end_dim") = -1,
           "Merges dims start_dim..end_dim into one (a view where the strides allow, else a copy).")
      .def(
          "squeeze",
          [](const Tensor& t, std::optional<int64_t> dim) { return dim ? t.squeeze(*dim) : t.squeeze(); },
          nb::arg("dim") = nb::none(), "A view without size-1 dims (only dim, when given and of size 1).")
      .def("unsqueeze", &Tensor::unsqueeze, nb::arg("dim"), "A view with a new size-1 dim at position dim.")
      .def(
          "narrow",
          [](const Tensor& t, int64_t dim, nb::handle start, nb::handle length) {
            return t.narrow(dim, sym_int_from(start), sym_int_from(length));
          },
          nb::arg("dim"), nb::arg("start"), nb::arg("length"),
          "A view of elements start..start+length along dim; start and length may be ts.LocalInts, a "
          "different "
          "slice per rank.")
      .def(
          "select",
          [](const Tensor& t, int64_t dim, nb::handle index) { return t.select(dim, sym_int_from(index)); },
          nb::arg("dim"), nb::arg("index"),
          "A view of the slice at index along dim, without that dim; index may be a ts.LocalInt (per rank).")
      .def(
          "flip", [](const Tensor& t, nb::handle dims) { return t.flip(dims_from(dims, "flip")); },
          nb::arg("dims"),
          "A view with the order of elements reversed along dims (negative strides: unlike PyTorch's flip, "
          "it "
          "shares memory with this tensor).")
      // Autograd
      .def_prop_rw("requires_grad", &Tensor::requires_grad,
                   [](Tensor& t, bool value) { t.set_requires_grad(value); })
      .def(
          "requires_grad_", [](Tensor& t, bool value) -> Tensor& { return t.requires_grad_(value); },
          nb::arg("requires_grad") = true, nb::rv_policy::reference_internal,
          "Sets whether autograd records operations on this (leaf) tensor, in place; returns the tensor.")
      .def_prop_rw(
          "grad", [](const Tensor& t) { return optional_tensor(t.grad()); },
          [](Tensor& t, std::optional<Tensor> grad) { t.set_grad(grad ? *grad : Tensor()); },
          nb::arg("grad").none())
      .def_prop_ro("is_leaf", &Tensor::is_leaf)
      .def_prop_ro(
          "grad_fn",
          [](const Tensor& t) -> nb::object {
            const std::string name = t.grad_fn_name();
            return name.empty() ? nb::object(nb::none()) : nb::object(nb::str(name.c_str()));
          },
          "The name of the function that made this tensor (None for a leaf).")
      .def(
          "retain_grad", [](Tensor& t) { t.retain_grad(); },
          "Keeps .grad for this non-leaf tensor after backward (leaves keep theirs anyway).")
      .def_prop_ro("_version", &Tensor::version)
      .def(
          "backward",
          [](const Tensor& t, std::optional<Tensor> gradient, bool retain_graph) {
            without_gil([&] { t.backward(gradient ? *gradient : Tensor(), retain_graph); });
          },
          nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = false,
          "Computes the gradients of this tensor with respect to the leaves that require them, accumulating "
          "into "
          "their .grad; gradient may be left out only for a one-element tensor (1). A local tensor runs "
          "backward "
          "per rank.");
  bind_tensor_ops(tensor);
}

}  // namespace tessera::python
