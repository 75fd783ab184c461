// ts.DTensor, ts.distribute_tensor, ts.DTensor.from_local and ts.visualize_sharding, with PyTorch's
// spellings; DTensor overloads of the module functions (ts.add, ts.matmul, ts.sum, ts.relu, ...).
// Every op may redistribute (collectives over the mesh's ranks), so each runs without the GIL.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <sstream>
#include <string>
#include <vector>

#include "operands.hpp"
#include "placements.hpp"

namespace tessera::python {
namespace {

// A global shape: DTensor shapes are the same on every rank, so a per-rank size is a mistake here.
Shape global_shape_from(const SymShape& shape, const char* what) {
  Shape out;
  for (const SymInt& size : shape) {
    if (size.is_local())
      throw nb::value_error((std::string(what) +
                             ": a DTensor's shape is global, the same on every rank; got the "
                             "per-rank size " +
                             size.to_string())
                                .c_str());
    out.push_back(size.as_int());
  }
  return out;
}

nb::tuple shape_to_python(const Shape& shape) { return nb::tuple(nb::cast(shape)); }

const DeviceMesh& mesh_from(nb::handle mesh, const char* what) {
  if (!nb::isinstance<DeviceMesh>(mesh))
    throw nb::type_error(
        (std::string(what) +
         ": device_mesh must be a ts.DeviceMesh (ts.init_device_mesh(...)), "
         "got " +
         describe(mesh) +
         (mesh.is_none() ? std::string(" (Tessera has no current mesh to default to)") : std::string()))
            .c_str());
  return nb::cast<const DeviceMesh&>(mesh);
}

// PyTorch's default when placements are left out: Replicate on every mesh dim.
Placements placements_or_replicate(nb::handle placements, const DeviceMesh& mesh, const char* what) {
  if (!placements.is_none()) return placements_from(placements, what);
  return Placements(static_cast<size_t>(mesh.ndim()), Replicate());
}

template <class Target>
void def_shared_ops(Target& target) {
  def_reduction<DTensor>(target, "sum", TESSERA_PY_REDUCE(sum));
  def_reduction<DTensor>(target, "mean", TESSERA_PY_REDUCE(mean));
  def_reduction<DTensor>(target, "max", TESSERA_PY_REDUCE(max));
  def_reduction<DTensor>(target, "min", TESSERA_PY_REDUCE(min));
  def_reduction<DTensor>(target, "prod", TESSERA_PY_REDUCE(prod));
  def_elementwise<DTensor>(target);
}

DTensor matmul_of(const DTensor& a, const DTensor& b) {
  return without_gil([&] { return tessera::matmul(a, b); });
}

// dt @ x where x is not a DTensor: PyTorch asks to distribute it first, and so does Tessera.
nb::object matmul_any(const DTensor& a, nb::handle b, bool reflected) {
  if (nb::isinstance<DTensor>(b)) {
    const DTensor& other = nb::cast<const DTensor&>(b);
    return nb::cast(reflected ? matmul_of(other, a) : matmul_of(a, other));
  }
  if (nb::isinstance<Tensor>(b))
    throw nb::type_error(
        "matmul: one operand is a DTensor and the other a plain ts.Tensor; distribute it first "
        "(ts.distribute_tensor(t, mesh, placements))");
  return nb::borrow(Py_NotImplemented);
}

DTensor convert(const DTensor& t, nb::handle target, std::optional<DType> dtype) {
  if (!target.is_none()) {
    if (!nb::isinstance<DType>(target))
      throw nb::type_error(
          ("DTensor.to: expected a ts.dtype (a DTensor stays on its mesh's device), got " + describe(target))
              .c_str());
    dtype = nb::cast<DType>(target);
  }
  if (!dtype) return t;
  return without_gil([&] { return t.to(*dtype); });
}

std::string pytorch_repr(const DTensor& t) {
  std::ostringstream out;
  out << t;
  return out.str();
}

// PyTorch: `with implicit_replication():` treats plain tensors mixed with DTensors as Replicate.
struct ImplicitReplicationScope {
  bool previous = false;
};

}  // namespace

void bind_dtensor(nb::module_& m) {
  nb::class_<DTensor> cls(
      m, "DTensor", "A tensor laid out over a device mesh (PyTorch: torch.distributed.tensor.DTensor).");
  cls.def_static(
         "from_local",
         [](const Tensor& local_tensor, nb::handle device_mesh, nb::handle placements, bool run_check,
            nb::handle shape) {
           (void)run_check;  // shard shapes are always checked against the layout
           const DeviceMesh& mesh = mesh_from(device_mesh, "DTensor.from_local");
           const Placements p = placements_or_replicate(placements, mesh, "DTensor.from_local");
           std::optional<Shape> global;
           if (!shape.is_none())
             global =
                 global_shape_from(shape_from_sequence(shape, "DTensor.from_local"), "DTensor.from_local");
           return without_gil([&] { return from_local(local_tensor, mesh, p, global); });
         },
         nb::arg("local_tensor"), nb::arg("device_mesh") = nb::none(), nb::arg("placements") = nb::none(),
         nb::kw_only(), nb::arg("run_check") = false, nb::arg("shape") = nb::none(),
         "Wraps each rank's shard without moving data; uneven layouts need the global `shape`.")
      .def("to_local", &DTensor::to_local, "Each rank's shard: a local tensor in simulation.")
      .def(
          "full_tensor", [](const DTensor& t) { return without_gil([&] { return t.full_tensor(); }); },
          "The whole tensor on every rank (a local tensor of equal shards; .reconcile() gives it plainly).")
      .def(
          "redistribute",
          [](const DTensor& t, nb::handle device_mesh, nb::handle placements) {
            const DeviceMesh& mesh =
                device_mesh.is_none() ? t.device_mesh() : mesh_from(device_mesh, "redistribute");
            const Placements p = placements_or_replicate(placements, mesh, "redistribute");
            return without_gil(
                [&] { return device_mesh.is_none() ? t.redistribute(p) : t.redistribute(mesh, p); });
          },
          nb::arg("device_mesh") = nb::none(), nb::arg("placements") = nb::none(),
          "The same global tensor with new placements (Replicate everywhere when none are given).")
      .def_prop_ro("placements", [](const DTensor& t) { return to_python(t.placements()); })
      .def_prop_ro("device_mesh", &DTensor::device_mesh)
      .def_prop_ro("device", [](const DTensor& t) { return t.device_mesh().device_type(); })
      .def_prop_ro(
          "shape", [](const DTensor& t) { return shape_to_python(t.shape()); }, "The global shape.")
      .def(
          "size",
          [](const DTensor& t, std::optional<int64_t> dim) -> nb::object {
            if (dim) return nb::int_(t.size(*dim));
            return shape_to_python(t.shape());
          },
          nb::arg("dim") = nb::none(), "The global shape, or one global size.")
      .def_prop_ro("ndim", &DTensor::dim)
      .def("dim", &DTensor::dim, "The number of dims of the global tensor.")
      .def("numel", &DTensor::numel, "The number of elements of the global tensor.")
      .def_prop_ro("dtype", &DTensor::dtype)
      .def("__len__",
           [](const DTensor& t) {
             if (t.dim() == 0) throw nb::type_error("len() of a 0-d DTensor");
             return t.size(0);
           })
      .def(
          "item",
          [](const DTensor& t) {
            return to_python(without_gil([&] { return t.full_tensor().reconcile().item(); }));
          },
          "The value of a one-element DTensor.")
      .def(
          "t", [](const DTensor& t) { return without_gil([&] { return t.t(); }); },
          "The transpose of a DTensor of at most 2 dims; shards move with their dims.")
      .def(
          "transpose",
          [](const DTensor& t, int64_t dim0, int64_t dim1) {
            return without_gil([&] { return tessera::transpose(t, dim0, dim1); });
          },
          nb::arg("dim0"), nb::arg("dim1"),
          "Swaps dims dim0 and dim1 of the global tensor; shards move with their dims.")
      .def(
          "permute",
          [](const DTensor& t, nb::args dims) {
            const Shape order = global_shape_from(shape_from_args(dims, "permute"), "permute");
            return without_gil([&] { return tessera::permute(t, order); });
          },
          "The global tensor with its dims in the given order; shards move with their dims.")
      .def(
          "view",
          [](const DTensor& t, nb::args shape) {
            const Shape s = global_shape_from(shape_from_args(shape, "view"), "view");
            return without_gil([&] { return t.view(s); });
          },
          "The global tensor in a new (global) shape: shards are kept where the sharded dims survive, else "
          "those mesh dims are replicated first, as PyTorch's DTensor does.")
      .def(
          "reshape",
          [](const DTensor& t, nb::args shape) {
            const Shape s = global_shape_from(shape_from_args(shape, "reshape"), "reshape");
            return without_gil([&] { return t.reshape(s); });
          },
          "The global tensor in a new (global) shape: shards are kept where the sharded dims survive, else "
          "those mesh dims are replicated first.")
      .def("to", &convert, nb::arg("target") = nb::none(), nb::kw_only(), nb::arg("dtype") = nb::none(),
           "This DTensor in another dtype, same mesh and placements (a DTensor stays on its mesh's device).")
      .def(
          "float", [](const DTensor& t) { return without_gil([&] { return t.to(kFloat32); }); },
          "This DTensor as float32, same mesh and placements.")
      .def(
          "double", [](const DTensor& t) { return without_gil([&] { return t.to(kFloat64); }); },
          "This DTensor as float64, same mesh and placements.")
      .def(
          "__matmul__", [](const DTensor& a, nb::handle b) { return matmul_any(a, b, false); },
          "self @ other for a DTensor other (see matmul).")
      .def(
          "__rmatmul__", [](const DTensor& a, nb::handle b) { return matmul_any(a, b, true); },
          "other @ self for a DTensor other (see matmul).")
      .def("matmul", &matmul_of, nb::arg("other"), dtensor_op_doc("matmul"))
      // Autograd
      .def_prop_rw("requires_grad", &DTensor::requires_grad,
                   [](DTensor& t, bool value) { t.set_requires_grad(value); })
      .def(
          "requires_grad_", [](DTensor& t, bool value) -> DTensor& { return t.requires_grad_(value); },
          nb::arg("requires_grad") = true, nb::rv_policy::reference_internal,
          "Sets whether autograd records operations on this (leaf) DTensor, in place; returns it.")
      .def_prop_ro(
          "grad",
          [](const DTensor& t) -> nb::object {
            if (!t.has_grad()) return nb::none();
            return nb::cast(t.grad());
          },
          "The gradient of the global value (None before backward reaches it).")
      .def_prop_ro("is_leaf", &DTensor::is_leaf)
      .def_prop_ro(
          "grad_fn",
          [](const DTensor& t) -> nb::object {
            const std::string name = t.grad_fn_name();
            return name.empty() ? nb::object(nb::none()) : nb::object(nb::str(name.c_str()));
          },
          "The name of the function that made this DTensor (None for a leaf).")
      .def(
          "zero_grad", [](DTensor& t, bool set_to_none) { t.zero_grad(set_to_none); },
          nb::arg("set_to_none") = true,
          "Clears the gradient: to None (set_to_none, the default), else its values set to zero in place.")
      .def(
          "backward",
          [](const DTensor& t, std::optional<DTensor> gradient, bool retain_graph) {
            without_gil([&] { t.backward(gradient, retain_graph); });
          },
          nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = false,
          "Computes the gradients of this DTensor with respect to the leaves that require them, accumulating "
          "into their .grad; gradient may be left out only for a one-element DTensor (1).")
      .def("detach", &DTensor::detach,
           "A DTensor sharing this one's shards and layout but cut from the autograd graph.")
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<std::uintptr_t>(self.ptr()); })
      .def("__repr__", &pytorch_repr)
      .def("__str__", &DTensor::to_string);
  def_arithmetic(cls);
  def_shared_ops(cls);

  m.def(
      "distribute_tensor",
      [](const Tensor& tensor, nb::handle device_mesh, nb::handle placements) {
        const DeviceMesh& mesh = mesh_from(device_mesh, "distribute_tensor");
        const Placements p = placements_or_replicate(placements, mesh, "distribute_tensor");
        return without_gil([&] { return distribute_tensor(tensor, mesh, p); });
      },
      nb::arg("tensor"), nb::arg("device_mesh") = nb::none(), nb::arg("placements") = nb::none(),
      "Lays `tensor` out over the mesh: Shard splits it, Replicate copies it (Replicate everywhere by "
      "default).");
  m.def(
      "visualize_sharding",
      [](const DTensor& t, const std::string& header, bool print_output) -> nb::object {
        std::string text = without_gil([&] { return visualize_sharding(t); });
        if (!header.empty()) text = header + "\n" + text;
        if (!print_output) return nb::str(text.c_str(), text.size());
        // As PyTorch's: printed, returning None (so the REPL does not show it twice). print adds
        // the final newline the text already has.
        if (!text.empty() && text.back() == '\n') text.pop_back();
        nb::print(nb::str(text.c_str(), text.size()));
        return nb::none();
      },
      nb::arg("dtensor"), nb::arg("header") = "", nb::kw_only(), nb::arg("print_output") = true,
      "Prints which ranks hold which part of a 1-d or 2-d DTensor; print_output=False returns the text "
      "instead.");

  nb::class_<ImplicitReplicationScope>(
      m, "implicit_replication",
      "with ts.implicit_replication(): plain tensors mixed with DTensors act as Replicate.")
      .def(nb::init<>())
      .def("__enter__",
           [](ImplicitReplicationScope& scope) {
             scope.previous = implicit_replication();
             set_implicit_replication(true);
           })
      .def("__exit__",
           [](ImplicitReplicationScope& scope, nb::args) { set_implicit_replication(scope.previous); });

  def_shared_ops(m);
  def_products_and_joins<DTensor>(m);
  def_like_factories<DTensor>(m);
}

}  // namespace tessera::python
