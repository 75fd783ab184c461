// The pieces of the _tessera module: one bind_* function per concept (one file each), and the
// conversions between Python values and Tessera's C++ ones that every piece shares.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <typeinfo>
#include <utility>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);                      // ts.Error
void bind_dtypes(nb::module_& m);                      // ts.float32, ...
void bind_sym_int(nb::module_& m);                     // ts.LocalInt
void bind_tensor(nb::module_& m);                      // ts.Tensor: properties, views, operators, autograd
void bind_local_tensor(nb::module_& m);                // ts.LocalTensor: the Python type of local tensors
void bind_ops(nb::module_& m);                         // ts.add, ts.matmul, ts.cat, ...
void bind_factories(nb::module_& m);                   // ts.ones, ts.tensor, ts.randn, ...
void bind_dlpack(nb::module_& m);                      // __dlpack__, ts.from_dlpack
void bind_local(nb::module_& m);                       // ts.LocalMode, ts.local_tensor, ts.rank_map, ...
void bind_dist(nb::module_& m);                        // ts.dist.*, ts.ReduceOp, ts.ProcessGroup
void bind_process_group_lifecycle(nb::module_& dist);  // ts.dist.init_process_group, ... (from bind_dist)
void bind_p2p(nb::module_& dist);      // ts.dist.isend, irecv, P2POp, batch_isend_irecv (from bind_dist)
void bind_spawn(nb::module_& m);       // ts.spawn, ts.yield_rank
void bind_mesh(nb::module_& m);        // ts.DeviceMesh, ts.init_device_mesh
void bind_placements(nb::module_& m);  // ts.Shard, ts.Replicate, ts.Partial
void bind_dtensor(nb::module_& m);     // ts.DTensor, ts.distribute_tensor, ...
void bind_observe(nb::module_& m);     // ts.CommCounter, tracing
void bind_plugins(nb::module_& m);     // ts.load_plugin, ts.configure, ...
void bind_checkpoint(nb::module_& m);  // ts.distributed.checkpoint: save, load, consolidate
void bind_signatures(nb::module_& m);  // ts._install_signatures: inspect.signature on bound functions

// A size: a Python int, or a ts.LocalInt for a size that differs per rank.
SymInt sym_int_from(nb::handle value);
// A size as Python sees it: an int, or a ts.LocalInt when it differs per rank.
nb::object to_python(const SymInt& value);
// A shape given as PyTorch takes it: sizes as separate arguments (ts.ones(2, 3)) or one sequence
// (ts.ones((2, 3)), ts.ones([2, 3])). `what` names the call in errors.
SymShape shape_from_args(const nb::args& args, const char* what);
SymShape shape_from_sequence(nb::handle sequence, const char* what);
// A shape as a Python tuple (ints, or ts.LocalInt where a size differs per rank).
nb::tuple to_python(const SymShape& shape);
// dims given as an int, a sequence of ints or None (every dim).
std::vector<int64_t> dims_from(nb::handle dims, const char* what);
// A value for an error message: its type and repr, e.g. "str 'a'".
std::string describe(nb::handle value);
// Whether `value` is something scalar_from takes: a bool, an int, a float, a ts.LocalInt, or a
// NumPy (or other) number.
bool is_number(nb::handle value);
// A Python bool, int or float (or ts.LocalInt) as a Scalar of the same kind.
Scalar scalar_from(nb::handle value, const char* what);
nb::object to_python(const Scalar& value);
// dtype= and device= keyword arguments as TensorOptions (device names a backend, e.g. "cpu").
TensorOptions options_from(const std::optional<DType>& dtype, const std::optional<std::string>& device);

// A tensor sharing the memory of a DLPack producer: a NumPy array, a torch tensor, a capsule, or a
// ts.Tensor itself (ts.from_dlpack; dlpack.cpp).
Tensor tensor_from_dlpack(nb::handle source);

// Runs `f` with the GIL released: ranks may run on other threads, and a Python callback they make
// takes the GIL back itself (see bind_local's rank_map).
// Called with the GIL just taken back: inside ts.spawn it tells PyGILState which thread state is
// the running rank's (rank_gil.cpp); elsewhere it does nothing.
void rebind_gilstate();
template <class F>
decltype(auto) without_gil(F&& f) {
  struct Rebind {
    ~Rebind() { rebind_gilstate(); }  // after `release` took the GIL back
  } rebind;
  nb::gil_scoped_release release;
  return f();
}

// A local tensor as Python sees it: an instance of ts.LocalTensor, a subclass of ts.Tensor, so that
// isinstance(t, ts.LocalTensor) and type(t).__name__ answer as in PyTorch. It adds nothing to Tensor
// (no members, no virtuals), so it has Tensor's layout; it exists only to give nanobind a second
// type to register (local_tensor_class.cpp).
struct LocalTensorObject : Tensor {
  LocalTensorObject() = default;
  explicit LocalTensorObject(Tensor t) : Tensor(std::move(t)) {}
};
static_assert(sizeof(LocalTensorObject) == sizeof(Tensor), "ts.LocalTensor must have ts.Tensor's layout");

}  // namespace tessera::python

// Every Tensor a binding returns goes through this hook, which picks its Python type: ts.LocalTensor
// for a local tensor, ts.Tensor otherwise. nanobind then copies or moves the Tensor into the new
// object with LocalTensorObject's constructors, which copy only the Tensor base (see the
// static_assert above). One is_local() test per returned tensor: no Python-level work.
namespace nanobind::detail {
template <>
struct type_hook<tessera::Tensor> {
  static const std::type_info* get(const tessera::Tensor* t) {
    if (t != nullptr && t->is_local()) return &typeid(tessera::python::LocalTensorObject);
    return &typeid(tessera::Tensor);
  }
};
}  // namespace nanobind::detail
