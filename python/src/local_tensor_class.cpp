// ts.LocalTensor (PyTorch: torch.distributed._local_tensor.LocalTensor): the Python type of every
// local tensor a binding returns (bindings.hpp's type hook picks it), a subclass of ts.Tensor. It
// adds the constructor from per-rank tensors and PyTorch's private accessors that programs written
// against LocalTensor use: _local_tensors, _ranks and _local_tensor_<rank>.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include <map>
#include <string>
#include <string_view>

#include "bindings.hpp"

namespace tessera::python {
namespace {

const Tensor& local_of(const LocalTensorObject& self, const char* what) {
  if (!self.is_local())
    throw Error(
        std::string("ts.LocalTensor.") + what +
        ": this object no longer holds a local tensor (an in-place operation made it a plain tensor)");
  return self;
}

nb::dict shards_of(const LocalTensorObject& self) {
  nb::dict out;
  for (const auto& [rank, shard] : local_of(self, "_local_tensors").shards())
    out[nb::int_(rank)] = nb::cast(shard);
  return out;
}

nb::frozenset ranks_of(const LocalTensorObject& self) {
  nb::list ranks;
  for (int r : local_of(self, "_ranks").ranks()) ranks.append(r);
  return nb::frozenset(ranks);
}

// t._local_tensor_<rank>: PyTorch's attribute spelling of one rank's shard. Only names that fail the
// normal lookup reach __getattr__, so ordinary attributes cost nothing extra.
nb::object shard_attribute(const LocalTensorObject& self, const std::string& name) {
  static constexpr std::string_view prefix = "_local_tensor_";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size())
    throw nb::attribute_error(("'LocalTensor' object has no attribute '" + name + "'").c_str());
  const std::string digits = name.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
    throw nb::attribute_error(("'LocalTensor' object has no attribute '" + name + "' (" +
                               std::string(prefix) + "<rank> needs a rank number, got '" + digits + "')")
                                  .c_str());
  const int rank = std::stoi(digits);
  const Tensor& t = local_of(self, name.c_str());
  if (!t.ranks().contains(rank))
    throw nb::attribute_error(("'LocalTensor' object has no attribute '" + name + "': rank " + digits +
                               " is not one of its ranks " + t.ranks().to_string())
                                  .c_str());
  return nb::cast(t.shard(rank));
}

}  // namespace

void bind_local_tensor(nb::module_& m) {
  nb::class_<LocalTensorObject, Tensor>(
      m, "LocalTensor",
      "A tensor holding one dense shard per rank (PyTorch: LocalTensor); every local tensor is one.\n\n"
      "    lt = ts.LocalTensor({0: ts.ones(2), 1: ts.zeros(2)})\n"
      "    lt._local_tensors[1], lt._local_tensor_1   # rank 1's shard\n")
      .def(
          "__init__",
          [](LocalTensorObject* self, const std::map<int, Tensor>& shards) {
            if (shards.empty())
              throw Error("ts.LocalTensor: needs at least one rank's tensor, got an empty dict");
            Tensor t = without_gil([&] { return local_tensor(RankMap<Tensor>(shards)); });
            new (self) LocalTensorObject(std::move(t));
          },
          nb::arg("local_tensors"), "A local tensor from a dict of per-rank dense tensors, {rank: tensor}.")
      .def_prop_ro("_local_tensors", &shards_of, "Every rank's dense shard, as a dict {rank: tensor}.")
      .def_prop_ro("_ranks", &ranks_of, "The ranks holding a shard, as a frozenset.")
      .def("__getattr__", &shard_attribute, nb::arg("name"),
           "t._local_tensor_<rank>: that rank's dense shard.");
}

}  // namespace tessera::python
