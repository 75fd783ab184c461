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
Tensor convert(const Tensor& t, nb::handle target, std::optional<DType> dtype, std::optional<std::string> device) {
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
      .def("size", [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
            if (dim) return to_python(t.sym_size(*dim));
            return to_python(t.shape());
          }, nb::arg("dim") = nb::none())
      .def("stride", [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
            if (!dim) return nb::tuple(nb::cast(t.strides()));
            return nb::int_(t.strides().at(static_cast<size_t>(*dim < 0 ? *dim + t.dim() : *dim)));
          }, nb::arg("dim") = nb::none())
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::backend, "The backend holding the tensor, e.g. 'cpu'.")
      .def_prop_ro("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("element_size", [](const Tensor& t) { return itemsize(t.dtype()); })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("__len__", [](const Tensor& t) {
            if (t.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
            return t.sym_size(0).as_int();
          })
      .def("__repr__", &Tensor::to_string)
      // Local tensors (PyTorch: LocalTensor)
      .def_prop_ro("is_local", &Tensor::is_local)
      .def_prop_ro("ranks", [](const Tensor& t) { return t.ranks().ranks(); })
      .def("shard", &Tensor::shard, nb::arg("rank"), "Rank's dense shard (shares its memory).")
      .def("shards", [](const Tensor& t) {
            std::map<int, Tensor> out;
            for (const auto& [rank, shard] : t.shards()) out.emplace(rank, shard);
            return out;
          }, "Every rank's shard, as a dict.")
      .def("reconcile", [](const Tensor& t) { return without_gil([&] { return t.reconcile(); }); },
           "The one value every rank holds; an error naming the first differing rank otherwise.")
      // Values
      .def("item", [](const Tensor& t) { return to_python(without_gil([&] { return t.item(); })); })
      .def("tolist", &tolist)
      .def("__float__", [](const Tensor& t) { return without_gil([&] { return t.item().to_double(); }); })
      .def("__int__", [](const Tensor& t) { return without_gil([&] { return t.item().to_int(); }); })
      // operator.index(t): an integer tensor of one element used where Python wants an int (a slice
      // bound, a size), as in PyTorch; a float, bool or local tensor is refused.
      .def("__index__", [](const Tensor& t) {
            const DType d = t.dtype();
            const bool integral = d == DType::Int8 || d == DType::UInt8 || d == DType::Int32 || d == DType::Int64;
            if (!integral || t.is_local() || t.numel() != 1)
              throw nb::type_error(("only integer tensors of a single element can be converted to an index, got a " +
                                    (t.is_local() ? std::string("local ") : std::string(dtype_name(d)) + " ") +
                                    "tensor of shape " + t.shape().to_string())
                                       .c_str());
            return without_gil([&] { return t.item().to_int(); });
          })
      .def("__bool__", [](const Tensor& t) { return without_gil([&] { return t.item().to_bool(); }); })
      .def("__getitem__", &index_tensor)
      .def("__setitem__", &assign_index)
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<std::uintptr_t>(self.ptr()); })
      .def("copy_", [](Tensor& t, const Tensor& src) -> Tensor& { return without_gil([&]() -> Tensor& { return t.copy_(src); }); },
           nb::arg("src"), nb::rv_policy::reference_internal)
      .def("fill_", [](Tensor& t, nb::handle value) -> Tensor& {
            const Scalar v = scalar_from(value, "fill_");
            return without_gil([&]() -> Tensor& { return t.fill_(v); });
          }, nb::arg("value"), nb::rv_policy::reference_internal)
      .def("zero_", [](Tensor& t) -> Tensor& { return without_gil([&]() -> Tensor& { return t.fill_(0); }); },
           nb::rv_policy::reference_internal)
      // Conversions
      .def("to", &convert, nb::arg("target") = nb::none(), nb::kw_only(), nb::arg("dtype") = nb::none(),
           nb::arg("device") = nb::none())
      .def("float", [](const Tensor& t) { return without_gil([&] { return t.to(kFloat32); }); })
      .def("double", [](const Tensor& t) { return without_gil([&] { return t.to(kFloat64); }); })
      .def("int", [](const Tensor& t) { return without_gil([&] { return t.to(kInt32); }); })
      .def("long", [](const Tensor& t) { return without_gil([&] { return t.to(kInt64); }); })
      .def("bool", [](const Tensor& t) { return without_gil([&] { return t.to(kBool); }); })
      .def("clone", [](const Tensor& t) { return without_gil([&] { return t.clone(); }); })
      .def("contiguous", [](const Tensor& t) { return without_gil([&] { return t.contiguous(); }); })
      .def("detach", &Tensor::detach)
      // Views
      .def("view", [](const Tensor& t, nb::args shape) { return t.view(shape_from_args(shape, "view")); })
      .def("reshape", [](const Tensor& t, nb::args shape) {
            const SymShape s = shape_from_args(shape, "reshape");
            return without_gil([&] { return t.reshape(s); });
          })
      .def("expand", [](const Tensor& t, nb::args shape) { return t.expand(shape_from_args(shape, "expand")); })
      .def("permute", [](const Tensor& t, nb::args dims) {
            std::vector<int64_t> order;
            for (const SymInt& d : shape_from_args(dims, "permute")) order.push_back(d.as_int());
            return t.permute(order);
          })
      .def("transpose", &Tensor::transpose, nb::arg("dim0"), nb::arg("dim1"))
      .def("t", &Tensor::t)
      .def_prop_ro("T", [](const Tensor& t) {
            std::vector<int64_t> reversed;
            for (int64_t d = t.dim(); d-- > 0;) reversed.push_back(d);
            return t.permute(reversed);
          })
      .def("flatten", &Tensor::flatten, nb::arg("start_dim") = 0, nb::arg("end_dim") = -1)
      .def("squeeze", [](const Tensor& t, std::optional<int64_t> dim) { return dim ? t.squeeze(*dim) : t.squeeze(); },
           nb::arg("dim") = nb::none())
      .def("unsqueeze", &Tensor::unsqueeze, nb::arg("dim"))
      .def("narrow", [](const Tensor& t, int64_t dim, nb::handle start, nb::handle length) {
            return t.narrow(dim, sym_int_from(start), sym_int_from(length));
          }, nb::arg("dim"), nb::arg("start"), nb::arg("length"))
      .def("select", [](const Tensor& t, int64_t dim, nb::handle index) { return t.select(dim, sym_int_from(index)); },
           nb::arg("dim"), nb::arg("index"))
      .def("flip", [](const Tensor& t, nb::handle dims) { return t.flip(dims_from(dims, "flip")); }, nb::arg("dims"))
      // Autograd
      .def_prop_rw("requires_grad", &Tensor::requires_grad,
                   [](Tensor& t, bool value) { t.set_requires_grad(value); })
      .def("requires_grad_", [](Tensor& t, bool value) -> Tensor& { return t.requires_grad_(value); },
           nb::arg("requires_grad") = true, nb::rv_policy::reference_internal)
      .def_prop_rw("grad", [](const Tensor& t) { return optional_tensor(t.grad()); },
                   [](Tensor& t, std::optional<Tensor> grad) { t.set_grad(grad ? *grad : Tensor()); },
                   nb::arg("grad").none())
      .def_prop_ro("is_leaf", &Tensor::is_leaf)
      .def_prop_ro("grad_fn", [](const Tensor& t) -> nb::object {
            const std::string name = t.grad_fn_name();
            return name.empty() ? nb::object(nb::none()) : nb::object(nb::str(name.c_str()));
          }, "The name of the function that made this tensor (None for a leaf).")
      .def("retain_grad", [](Tensor& t) { t.retain_grad(); })
      .def_prop_ro("_version", &Tensor::version)
      .def("backward", [](const Tensor& t, std::optional<Tensor> gradient, bool retain_graph) {
            without_gil([&] { t.backward(gradient ? *gradient : Tensor(), retain_graph); });
          }, nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = false);
  bind_tensor_ops(tensor);
}

}  // namespace tessera::python
