// ts.Placement and its kinds ts.Shard, ts.BalancedShard, ts.Replicate, ts.Partial. Each kind is a
// Python subclass of ts.Placement (as in PyTorch, where isinstance(p, Shard) is how code asks), all
// holding the one C++ Placement value; dt.placements hands back the subclass of each kind.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <functional>
#include <string>

#include "placements.hpp"

namespace tessera::python {
namespace {

// The Python classes' C++ types: no state of their own, only the kind they are registered as.
struct ShardPlacement : Placement {
  explicit ShardPlacement(const Placement& p) : Placement(p) {}
};
struct BalancedShardPlacement : ShardPlacement {
  explicit BalancedShardPlacement(const Placement& p) : ShardPlacement(p) {}
};
struct ReplicatePlacement : Placement {
  explicit ReplicatePlacement(const Placement& p) : Placement(p) {}
};
struct PartialPlacement : Placement {
  explicit PartialPlacement(const Placement& p) : Placement(p) {}
};

std::string kind_of(nb::handle value) {
  return nb::cast<std::string>(nb::str(value.type().attr("__name__")));
}

Placement placement_item(nb::handle item, size_t index, const char* what) {
  if (nb::isinstance<Placement>(item)) return nb::cast<const Placement&>(item);
  if (PyUnicode_Check(item.ptr())) return Placement::parse(nb::cast<std::string>(item));
  throw nb::type_error(
      (std::string(what) + ": placement " + std::to_string(index) + " is a " + kind_of(item) + " (" +
       nb::cast<std::string>(nb::repr(item)) +
       "); expected a ts.Placement (ts.Shard(0), ts.Replicate(), ts.Partial()) or its text (\"S(0)\")")
          .c_str());
}

}  // namespace

Placements placements_from(nb::handle placements, const char* what) {
  if (PyUnicode_Check(placements.ptr())) return parse_placements(nb::cast<std::string>(placements));
  if (nb::isinstance<Placement>(placements) || !PySequence_Check(placements.ptr()))
    throw nb::type_error((std::string(what) +
                          ": placements must be a sequence with one placement per mesh dim, "
                          "e.g. [ts.Shard(0)] or (ts.Shard(0), ts.Replicate()); got " +
                          kind_of(placements) + " " + nb::cast<std::string>(nb::repr(placements)))
                             .c_str());
  Placements out;
  for (nb::handle item : nb::iter(placements)) out.push_back(placement_item(item, out.size(), what));
  return out;
}

nb::object to_python(const Placement& placement) {
  switch (placement.kind()) {
    case Placement::Kind::Shard:
      if (placement.strategy() == "balanced_shard") return nb::cast(BalancedShardPlacement(placement));
      return nb::cast(ShardPlacement(placement));
    case Placement::Kind::Partial:
      return nb::cast(PartialPlacement(placement));
    case Placement::Kind::Replicate:
      break;
  }
  return nb::cast(ReplicatePlacement(placement));
}

nb::tuple to_python(const Placements& placements) {
  nb::list out;
  for (const Placement& p : placements) out.append(to_python(p));
  return nb::tuple(out);
}

void bind_placements(nb::module_& m) {
  nb::class_<Placement>(m, "Placement",
                        "How a DTensor is laid out along one mesh dim: ts.Shard, ts.Replicate or ts.Partial.")
      .def_static(
          "parse", [](const std::string& text) { return to_python(Placement::parse(text)); }, nb::arg("text"),
          "One placement from its text: \"S(0)\", \"R\", \"P(sum)\", \"Shard(dim=0)\", \"Replicate()\", ...")
      .def(
          "is_shard",
          [](const Placement& p, std::optional<int64_t> dim) {
            return dim ? p.is_shard(*dim) : p.is_shard();
          },
          nb::arg("dim") = nb::none(), "Whether this is a Shard (of tensor dim `dim`, when given).")
      .def("is_replicate", &Placement::is_replicate, "Whether this is Replicate.")
      .def(
          "is_partial",
          [](const Placement& p, std::optional<std::string> reduce_op) {
            return p.is_partial() && (!reduce_op || p.reduce_op() == *reduce_op);
          },
          nb::arg("reduce_op") = nb::none(),
          "Whether this is a Partial (with that reduce_op, e.g. 'sum', when given).")
      .def_prop_ro("strategy", &Placement::strategy,
                   "The layout's name: \"shard\", \"balanced_shard\", \"replicate\", ...")
      .def("__eq__",
           [](const Placement& a, nb::handle b) -> nb::object {
             if (!nb::isinstance<Placement>(b)) return nb::borrow(Py_NotImplemented);
             return nb::bool_(a == nb::cast<const Placement&>(b));
           })
      .def("__ne__",
           [](const Placement& a, nb::handle b) -> nb::object {
             if (!nb::isinstance<Placement>(b)) return nb::borrow(Py_NotImplemented);
             return nb::bool_(!(a == nb::cast<const Placement&>(b)));
           })
      // Equal placements have equal PyTorch-style text, so it hashes consistently with ==.
      .def("__hash__", [](const Placement& p) { return std::hash<std::string>()(p.repr()); })
      .def("__repr__", &Placement::repr)
      .def("__str__", &Placement::to_string,
           "The short form, as PyTorch prints it: \"S(0)\", \"R\", \"P(sum)\".");

  nb::class_<ShardPlacement, Placement>(m, "Shard",
                                        "Split tensor dim `dim` over the mesh dim (torch.chunk sizes).")
      .def(
          "__init__",
          [](ShardPlacement* self, int64_t dim) { new (self) ShardPlacement(Placement::shard(dim)); },
          nb::arg("dim"))
      .def_prop_ro("dim", &Placement::dim)
      .def_prop_ro("arguments", &Placement::arguments, "A plugin strategy's arguments (\"\" for none).");
  nb::class_<BalancedShardPlacement, ShardPlacement>(
      m, "BalancedShard", "Split tensor dim `dim` so that the first n % k shards get one extra element.")
      .def(
          "__init__",
          [](BalancedShardPlacement* self, int64_t dim) {
            new (self) BalancedShardPlacement(Placement::shard(dim, "balanced_shard"));
          },
          nb::arg("dim"));
  nb::class_<ReplicatePlacement, Placement>(m, "Replicate",
                                            "Every rank of the mesh dim holds the whole tensor.")
      .def("__init__",
           [](ReplicatePlacement* self) { new (self) ReplicatePlacement(Placement::replicate()); });
  nb::class_<PartialPlacement, Placement>(
      m, "Partial",
      "Every rank holds a term; the value is their reduction (sum, avg, min, max, product, band, bor, bxor).")
      .def(
          "__init__",
          [](PartialPlacement* self, const std::string& reduce_op) {
            new (self) PartialPlacement(Placement::partial(reduce_op));
          },
          nb::arg("reduce_op") = "sum")
      .def_prop_ro("reduce_op", &Placement::reduce_op);

  m.def(
      "parse_placements", [](const std::string& text) { return to_python(parse_placements(text)); },
      nb::arg("text"), "Placements from text: \"S(0),R\" or \"(Shard(dim=0), Replicate())\".");
}

}  // namespace tessera::python
