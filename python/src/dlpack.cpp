// Zero-copy interchange: tensors export themselves through __dlpack__ / __dlpack_device__ (so
// np.from_dlpack(t) and torch.from_dlpack(t) share their memory), and ts.from_dlpack takes any
// DLPack producer (a NumPy array, a torch tensor, a capsule) without copying.
#include <dlpack/dlpack.h>

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// DLPack 1.0's versioned tensor, which Debian's DLPack 0.6 header predates. Its layout is fixed by
// the DLPack ABI (dlpack.h, DLManagedTensorVersioned); the DLTensor inside is the same as 0.6's.
// Consumers mark arrays from unversioned capsules read-only (NumPy does), so a writable share
// needs this one.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kReadOnlyFlag = 1ULL << 0;  // DLPACK_FLAG_BITMASK_READ_ONLY

constexpr const char* kCapsuleName = "dltensor";                     // unversioned
constexpr const char* kVersionedCapsuleName = "dltensor_versioned";  // DLPack >= 1.0
// Consumers rename a capsule so once they own its tensor.
constexpr const char* kUsedCapsuleName = "used_dltensor";
constexpr const char* kUsedVersionedCapsuleName = "used_dltensor_versioned";

// A capsule nobody consumed still owns its tensor.
void release_unconsumed(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kCapsuleName)) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
    if (managed->deleter != nullptr) managed->deleter(managed);
  } else if (PyCapsule_IsValid(capsule, kVersionedCapsuleName)) {
    auto* managed =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedCapsuleName));
    if (managed->deleter != nullptr) managed->deleter(managed);
  }
}

nb::object capsule_of(void* managed, const char* name, void (*release)(void*)) {
  PyObject* capsule = PyCapsule_New(managed, name, release_unconsumed);
  if (capsule == nullptr) {
    release(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

// The versioned wrapper of an exported tensor: releasing it releases the export inside.
struct VersionedExport {
  DLManagedTensorVersioned versioned;
  DLManagedTensor* inner;
};

void release_versioned(DLManagedTensorVersioned* self) {
  auto* exported = static_cast<VersionedExport*>(self->manager_ctx);
  exported->inner->deleter(exported->inner);
  delete exported;
}

nb::object to_capsule(const Tensor& t, bool versioned) {
  DLManagedTensor* managed = to_dlpack(t);
  if (!versioned)
    return capsule_of(managed, kCapsuleName, [](void* m) {
      static_cast<DLManagedTensor*>(m)->deleter(static_cast<DLManagedTensor*>(m));
    });
  auto* exported = new VersionedExport{{{1, 0}, nullptr, release_versioned, 0, managed->dl_tensor}, managed};
  exported->versioned.manager_ctx = exported;
  return capsule_of(&exported->versioned, kVersionedCapsuleName,
                    [](void* m) { release_versioned(static_cast<DLManagedTensorVersioned*>(m)); });
}

nb::object dunder_dlpack(const Tensor& t, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         std::optional<bool> copy) {
  (void)stream;  // host memory: there is no stream to synchronise with
  if (!dl_device.is_none()) {
    const auto [type, id] = nb::cast<std::pair<int, int>>(dl_device);
    const auto [own_type, own_id] = dlpack_device(t);
    if (type != own_type || id != own_id)
      throw nb::buffer_error(("__dlpack__: dl_device=(" + std::to_string(type) + ", " + std::to_string(id) +
                              ") asks for another device than the tensor's (" + std::to_string(own_type) +
                              ", " + std::to_string(own_id) + ")")
                                 .c_str());
  }
  // A consumer that reads DLPack 1.x gets the versioned capsule; an older one the unversioned.
  const bool versioned = !max_version.is_none() && nb::cast<std::pair<int, int>>(max_version).first >= 1;
  return to_capsule(copy.value_or(false) ? without_gil([&] { return t.clone(); }) : t, versioned);
}

// What Tessera's import owns: the producer's tensor (either kind), released with the GIL held,
// because the producer's deleter may touch Python objects (NumPy's does) and Tessera may drop the
// last view on any thread.
struct ImportedTensor {
  void* producer;
  void (*release)(void* producer);
  DLManagedTensor wrapper;
};

void release_import(DLManagedTensor* wrapper) {
  auto* imported = static_cast<ImportedTensor*>(wrapper->manager_ctx);
  if (Py_IsInitialized()) {  // at exit Python is gone, and with it the producer's memory
    nb::gil_scoped_acquire gil;
    imported->release(imported->producer);
  }
  delete imported;
}

Tensor import_tensor(void* producer, void (*release)(void*), const DLTensor& dl) {
  auto* imported = new ImportedTensor{producer, release, {}};
  imported->wrapper.dl_tensor = dl;
  imported->wrapper.manager_ctx = imported;
  imported->wrapper.deleter = release_import;
  return tessera::from_dlpack(&imported->wrapper);  // owns it from here, errors included
}

Tensor from_capsule(nb::handle capsule) {
  if (PyCapsule_IsValid(capsule.ptr(), kVersionedCapsuleName)) {
    auto* managed =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule.ptr(), kVersionedCapsuleName));
    if (managed->version.major != 1)
      throw Error("ts.from_dlpack: the capsule holds a DLPack " + std::to_string(managed->version.major) +
                  "." + std::to_string(managed->version.minor) +
                  " tensor; Tessera reads DLPack 1.x (and the unversioned 0.x)");
    if ((managed->flags & kReadOnlyFlag) != 0)
      throw Error(
          "ts.from_dlpack: the producer marks its memory read-only, and a Tessera tensor can be written, so "
          "the memory cannot be shared; ts.tensor(x) makes a copy");
    PyCapsule_SetName(capsule.ptr(), kUsedVersionedCapsuleName);
    return import_tensor(
        managed,
        [](void* m) {
          auto* held = static_cast<DLManagedTensorVersioned*>(m);
          if (held->deleter != nullptr) held->deleter(held);
        },
        managed->dl_tensor);
  }
  if (PyCapsule_IsValid(capsule.ptr(), kCapsuleName)) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
    PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName);
    return import_tensor(
        managed,
        [](void* m) {
          auto* held = static_cast<DLManagedTensor*>(m);
          if (held->deleter != nullptr) held->deleter(held);
        },
        managed->dl_tensor);
  }
  const char* name = PyCapsule_GetName(capsule.ptr());
  throw Error(
      "ts.from_dlpack: the capsule is named '" + std::string(name != nullptr ? name : "") +
      "'; expected an unconsumed 'dltensor' or 'dltensor_versioned' (a DLPack capsule is consumed once)");
}

}  // namespace

Tensor tensor_from_dlpack(nb::handle source) {
  if (nb::isinstance<Tensor>(source)) return nb::cast<Tensor>(source);
  if (PyCapsule_CheckExact(source.ptr())) return from_capsule(source);
  if (!nb::hasattr(source, "__dlpack__"))
    throw nb::type_error(
        ("ts.from_dlpack: expected an object with __dlpack__ (a NumPy array, a torch tensor) "
         "or a DLPack capsule, got " +
         nb::cast<std::string>(nb::str(source.type().attr("__name__"))))
            .c_str());
  nb::object capsule;
  try {
    capsule = source.attr("__dlpack__")(nb::arg("max_version") = nb::make_tuple(1, 0));
  } catch (nb::python_error& error) {
    if (!error.matches(PyExc_TypeError)) throw;  // a producer older than DLPack 1.0: no max_version
    capsule = source.attr("__dlpack__")();
  }
  return from_capsule(capsule);
}

namespace {

nb::object as_numpy(const Tensor& t) {
  nb::object numpy = nb::module_::import_("numpy");
  if (!t.is_local()) return numpy.attr("from_dlpack")(nb::cast(t));
  nb::dict shards;
  for (const auto& [rank, shard] : t.shards())
    shards[nb::int_(rank)] = numpy.attr("from_dlpack")(nb::cast(shard));
  return shards;
}

// np.asarray(t) / np.array(t): NumPy's array protocol, through DLPack (so np.asarray shares the
// memory). A local tensor has a value per rank, not one array: t.numpy() gives them all.
nb::object dunder_array(const Tensor& t, nb::handle dtype, std::optional<bool> copy) {
  if (t.is_local())
    throw nb::type_error(("np.asarray(t): t is a local tensor with a shard per rank " +
                          t.ranks().to_string() +
                          ", not one array; use t.reconcile() (one value on every rank), t.shard(rank) or "
                          "t.numpy() (a dict of one array per rank)")
                             .c_str());
  if (t.dtype() == DType::BFloat16)
    throw nb::type_error("np.asarray(t): NumPy has no bfloat16; convert first, e.g. np.asarray(t.float())");
  nb::object numpy = nb::module_::import_("numpy");
  nb::object array = numpy.attr("from_dlpack")(nb::cast(t));
  if (!dtype.is_none()) {
    if (copy.has_value() && !*copy && !array.attr("dtype").equal(numpy.attr("dtype")(dtype)))
      throw nb::value_error("np.asarray(t, copy=False): converting the dtype needs a copy");
    array = array.attr("astype")(dtype, nb::arg("copy") = false);
  }
  if (copy.value_or(false)) array = array.attr("copy")();
  return array;
}

// ts.from_numpy(a): PyTorch's spelling of sharing a NumPy array's memory (NumPy arrays only).
Tensor from_numpy(nb::handle array) {
  nb::object numpy = nb::module_::import_("numpy");
  if (!nb::isinstance(array, numpy.attr("ndarray")))
    throw nb::type_error(("ts.from_numpy: expected a numpy.ndarray, got " + describe(array)).c_str());
  return tensor_from_dlpack(array);
}

}  // namespace

void bind_dlpack(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  cls.def("__dlpack__", &dunder_dlpack, nb::kw_only(), nb::arg("stream") = nb::none(),
          nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(),
          nb::arg("copy") = nb::none())
      .def("__dlpack_device__", &dlpack_device)
      .def("__array__", &dunder_array, nb::arg("dtype") = nb::none(), nb::kw_only(),
           nb::arg("copy") = nb::none(),
           "NumPy's array protocol: np.asarray(t) shares t's memory (a plain tensor; not bfloat16).")
      .def("numpy", &as_numpy,
           "A NumPy array sharing this tensor's memory; for a local tensor, a dict of one per rank.");
  m.def("from_dlpack", &tensor_from_dlpack, nb::arg("ext_tensor"),
        "A tensor sharing the memory of a DLPack producer (NumPy array, torch tensor, capsule).");
  m.def("from_numpy", &from_numpy, nb::arg("ndarray"),
        "A tensor sharing a NumPy array's memory (writes through either show in both).");
  m.def(
      "to_dlpack", [](const Tensor& t) { return to_capsule(t, false); }, nb::arg("tensor"),
      "An unversioned DLPack capsule sharing this tensor's memory (torch.utils.dlpack.to_dlpack).");
}

}  // namespace tessera::python
