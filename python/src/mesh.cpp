// ts.DeviceMesh and ts.init_device_mesh, with PyTorch's spellings (shape and ndim as properties,
// size(mesh_dim=None), get_group / get_local_rank by dim index or name, mesh["tp"]).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessera::python {
namespace {

std::string kind_of(nb::handle value) {
  return nb::cast<std::string>(nb::str(value.type().attr("__name__")));
}
std::string repr_of(nb::handle value) { return nb::cast<std::string>(nb::repr(value)); }

bool is_sequence(nb::handle value) { return PySequence_Check(value.ptr()) && !PyUnicode_Check(value.ptr()); }

// A nested list of ranks (PyTorch's `mesh` argument: a list, a NumPy array or a tensor) as its
// shape and its ranks in row-major order.
void read_ranks(nb::handle level, size_t depth, std::vector<int64_t>& shape, std::vector<int>& ranks) {
  if (!is_sequence(level)) {
    if (depth != shape.size() && !shape.empty())
      throw nb::value_error(("DeviceMesh: the mesh is ragged: rank " + repr_of(level) + " sits at depth " +
                             std::to_string(depth) + " but the first entry's depth is " +
                             std::to_string(shape.size()))
                                .c_str());
    if (!PyIndex_Check(level.ptr()) || PyBool_Check(level.ptr()))
      throw nb::type_error(
          ("DeviceMesh: the mesh holds " + kind_of(level) + " " + repr_of(level) + "; expected integer ranks")
              .c_str());
    ranks.push_back(nb::cast<int>(nb::steal(PyNumber_Index(level.ptr()))));
    return;
  }
  const int64_t length = static_cast<int64_t>(nb::len(level));
  if (ranks.empty() && depth == shape.size())
    shape.push_back(length);  // the first path down sets the shape
  else if (depth >= shape.size() || shape[depth] != length)
    throw nb::value_error(("DeviceMesh: the mesh is ragged: a list at depth " + std::to_string(depth) +
                           " has " + std::to_string(length) + " entries, another has " +
                           (depth < shape.size() ? std::to_string(shape[depth]) : std::string("none")))
                              .c_str());
  for (nb::handle item : nb::iter(level)) read_ranks(item, depth + 1, shape, ranks);
}

std::vector<std::string> names_from(nb::handle names) {
  if (names.is_none()) return {};
  if (!is_sequence(names))
    throw nb::type_error(
        ("mesh_dim_names: expected a tuple of strings, got " + kind_of(names) + " " + repr_of(names))
            .c_str());
  return nb::cast<std::vector<std::string>>(names);
}

std::vector<int64_t> mesh_shape_from(nb::handle shape) {
  if (PyIndex_Check(shape.ptr())) return {nb::cast<int64_t>(nb::steal(PyNumber_Index(shape.ptr())))};
  if (!is_sequence(shape))
    throw nb::type_error(
        ("init_device_mesh: mesh_shape must be a tuple of ints, got " + kind_of(shape) + " " + repr_of(shape))
            .c_str());
  std::vector<int64_t> out;
  for (nb::handle size : nb::iter(shape))
    out.push_back(nb::cast<int64_t>(nb::steal(PyNumber_Index(size.ptr()))));
  return out;
}

DeviceMesh make_mesh(const std::string& device_type, nb::handle mesh, nb::handle mesh_dim_names,
                     std::optional<std::vector<int64_t>> shape,
                     std::optional<std::vector<std::vector<int>>> fibres) {
  std::vector<std::string> names = names_from(mesh_dim_names);
  if (!mesh.is_none()) {
    if (shape || fibres)
      throw nb::type_error(
          "DeviceMesh: give either `mesh` (nested ranks, as PyTorch) or `shape` (with optional "
          "`fibres`), not both");
    // NumPy arrays and tensors become nested lists first, so every kind of input reads the same way.
    nb::object nested = nb::hasattr(mesh, "tolist") ? mesh.attr("tolist")() : nb::borrow(mesh);
    std::vector<int64_t> dims;
    std::vector<int> ranks;
    read_ranks(nested, 0, dims, ranks);
    if (dims.empty())
      throw nb::value_error("DeviceMesh: the mesh is a single rank; expected a list of ranks");
    return DeviceMesh(device_type, std::move(dims), std::move(names), {std::move(ranks)});
  }
  if (!shape) throw nb::type_error("DeviceMesh: give `mesh` (nested ranks) or `shape`");
  return DeviceMesh(device_type, *shape, std::move(names),
                    fibres ? *fibres : std::vector<std::vector<int>>{});
}

// A mesh dim given as PyTorch takes it: an index, a name, or None (only for a 1-d mesh).
template <class ByIndex, class ByName, class Whole>
auto on_dim(nb::handle dim, ByIndex by_index, ByName by_name, Whole whole) {
  if (dim.is_none()) return whole();
  if (PyUnicode_Check(dim.ptr())) return by_name(nb::cast<std::string>(dim));
  if (PyIndex_Check(dim.ptr()) && !PyBool_Check(dim.ptr()))
    return by_index(nb::cast<int64_t>(nb::steal(PyNumber_Index(dim.ptr()))));
  throw nb::type_error(
      ("mesh_dim: expected a dim index, a dim name or None, got " + kind_of(dim) + " " + repr_of(dim))
          .c_str());
}

nb::object names_to_python(const DeviceMesh& mesh) {
  if (mesh.dim_names().empty()) return nb::none();  // PyTorch: None for an unnamed mesh
  return nb::tuple(nb::cast(mesh.dim_names()));
}

nb::list symints_to_python(const std::vector<SymInt>& values) {
  nb::list out;
  for (const SymInt& v : values) out.append(to_python(v));
  return out;
}

}  // namespace

void bind_mesh(nb::module_& m) {
  nb::class_<DeviceMesh>(m, "DeviceMesh",
                         "An n-d array of global ranks (PyTorch: torch.distributed.device_mesh.DeviceMesh).")
      .def(
          "__init__",
          [](DeviceMesh* self, const std::string& device_type, nb::handle mesh, nb::handle mesh_dim_names,
             std::optional<std::vector<int64_t>> shape, std::optional<std::vector<std::vector<int>>> fibres) {
            new (self)
                DeviceMesh(make_mesh(device_type, mesh, mesh_dim_names, std::move(shape), std::move(fibres)));
          },
          nb::arg("device_type"), nb::arg("mesh") = nb::none(), nb::kw_only(),
          nb::arg("mesh_dim_names") = nb::none(), nb::arg("shape") = nb::none(),
          nb::arg("fibres") = nb::none(),
          "DeviceMesh('cpu', [[0, 1], [2, 3]], mesh_dim_names=('dp', 'tp')) as in PyTorch, or as in C++ "
          "DeviceMesh('cpu', shape=(2, 2), fibres=[[0, 1, 2, 3], [4, 5, 6, 7]]) for sibling sub-meshes.")
      .def_prop_ro("device_type", &DeviceMesh::device_type)
      .def_prop_ro("shape", [](const DeviceMesh& mesh) { return nb::tuple(nb::cast(mesh.shape())); })
      .def_prop_ro("ndim", &DeviceMesh::ndim)
      .def(
          "size",
          [](const DeviceMesh& mesh, std::optional<int64_t> mesh_dim) {
            return mesh_dim ? mesh.size(*mesh_dim) : mesh.size();
          },
          nb::arg("mesh_dim") = nb::none(), "Ranks along one dim, or in the whole mesh.")
      .def_prop_ro("mesh_dim_names", &names_to_python, "The dim names as a tuple; None for an unnamed mesh.")
      .def_prop_ro("fibres", &DeviceMesh::fibres,
                   "The sibling sub-meshes a sliced mesh stands for, each its ranks in row-major order.")
      .def_prop_ro("ranks", &DeviceMesh::ranks, "Every rank of every fibre, ascending.")
      .def("coordinate_of", &DeviceMesh::coordinate_of, nb::arg("rank"),
           "A global rank's coordinate in its fibre.")
      .def(
          "get_group",
          [](const DeviceMesh& mesh, nb::handle mesh_dim) {
            return on_dim(
                mesh_dim, [&](int64_t d) { return mesh.get_group(d); },
                [&](const std::string& n) { return mesh.get_group(n); }, [&] { return mesh.get_group(); });
          },
          nb::arg("mesh_dim") = nb::none(),
          "The ProcessGroup along one mesh dim (an index or a name; a 1-d mesh needs none): its fibres, one "
          "per "
          "coordinate of the other dims.")
      .def(
          "get_all_groups",
          [](const DeviceMesh& mesh) {
            std::vector<ProcessGroup> groups;
            for (int64_t d = 0; d < mesh.ndim(); ++d) groups.push_back(mesh.group(d));
            return groups;
          },
          "The ProcessGroup of every mesh dim, in dim order.")
      .def(
          "get_local_rank",
          [](const DeviceMesh& mesh, nb::handle mesh_dim) {
            return to_python(on_dim(
                mesh_dim, [&](int64_t d) { return mesh.get_local_rank(d); },
                [&](const std::string& n) { return mesh.get_local_rank(n); },
                [&] { return mesh.get_local_rank(); }));
          },
          nb::arg("mesh_dim") = nb::none(), "This rank's index along a dim (a ts.LocalInt in simulation).")
      .def(
          "get_coordinate", [](const DeviceMesh& mesh) { return symints_to_python(mesh.get_coordinate()); },
          "This rank's coordinate (ts.LocalInt entries in simulation).")
      .def(
          "__getitem__",
          [](const DeviceMesh& mesh, nb::handle names) {
            if (PyUnicode_Check(names.ptr())) return mesh[nb::cast<std::string>(names)];
            if (is_sequence(names)) return mesh[nb::cast<std::vector<std::string>>(names)];
            throw nb::type_error(("mesh[...]: expected a dim name or a tuple of dim names, got " +
                                  kind_of(names) + " " + repr_of(names))
                                     .c_str());
          },
          nb::arg("mesh_dim_names"))
      .def("flatten", &DeviceMesh::flatten, nb::arg("mesh_dim_name") = "",
           "One dim holding every rank; named `mesh_dim_name` (default: the dim names joined by '_').")
      .def("_flatten", &DeviceMesh::flatten, nb::arg("mesh_dim_name") = "", "PyTorch's spelling of flatten.")
      .def(
          "with_topology",
          [](const DeviceMesh& mesh, const std::string& preset) {
            const std::vector<int> ranks = mesh.ranks();
            return mesh.with_topology(Topology::preset(preset, ranks.empty() ? 0 : ranks.back() + 1));
          },
          nb::arg("preset"), "The mesh over a topology preset: \"ring\", \"torus:RxC\", \"nodes:K\", ...")
      .def_prop_ro(
          "topology", [](const DeviceMesh& mesh) { return mesh.topology().name(); },
          "The name of the topology its collectives are costed on.")
      .def("__eq__",
           [](const DeviceMesh& a, nb::handle b) -> nb::object {
             if (!nb::isinstance<DeviceMesh>(b)) return nb::borrow(Py_NotImplemented);
             return nb::bool_(a == nb::cast<const DeviceMesh&>(b));
           })
      .def("__ne__",
           [](const DeviceMesh& a, nb::handle b) -> nb::object {
             if (!nb::isinstance<DeviceMesh>(b)) return nb::borrow(Py_NotImplemented);
             return nb::bool_(!(a == nb::cast<const DeviceMesh&>(b)));
           })
      // The repr holds device type, ranks and names; equal meshes print the same.
      .def("__hash__", [](const DeviceMesh& mesh) { return std::hash<std::string>()(mesh.to_string()); })
      .def("__repr__", &DeviceMesh::to_string);

  m.def(
      "init_device_mesh",
      [](const std::string& device_type, nb::handle mesh_shape, nb::handle mesh_dim_names) {
        const std::vector<int64_t> shape = mesh_shape_from(mesh_shape);
        const std::vector<std::string> names = names_from(mesh_dim_names);
        // May load the backend plugin serving the device type.
        return without_gil([&] { return init_device_mesh(device_type, shape, names); });
      },
      nb::arg("device_type"), nb::arg("mesh_shape"), nb::kw_only(), nb::arg("mesh_dim_names") = nb::none(),
      "A mesh over ranks 0..prod(mesh_shape)-1 in row-major order; inside a ts.LocalMode the product must be "
      "its rank count.");
}

}  // namespace tessera::python
