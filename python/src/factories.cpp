// Tensor factories with PyTorch's spellings: sizes as separate arguments or one sequence, dtype=,
// device= (a backend name) and requires_grad= as keywords; ts.tensor(data) copies nested lists,
// numbers, NumPy arrays and tensors.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "operands.hpp"

namespace tessera::python {
namespace {

// Nested Python sequences of numbers, flattened in row-major order with their shape and the type
// PyTorch would infer: bool when all are bools, int64 when all are ints, else the default float.
struct FlatData {
  Shape shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<bool> bools;
  bool any_float = false;
  bool any_int = false;
  bool any_bool = false;
  bool shape_known = false;
};

[[noreturn]] void ragged(const FlatData& flat, size_t depth, int64_t got) {
  throw Error("ts.tensor: the data is ragged: a sequence at depth " + std::to_string(depth) + " has " +
              std::to_string(got) + " elements where the first one at that depth had " +
              std::to_string(flat.shape[depth]));
}

void flatten(nb::handle value, size_t depth, FlatData& flat) {
  const bool sequence = PyList_Check(value.ptr()) || PyTuple_Check(value.ptr());
  if (!sequence) {
    if (flat.shape_known && depth != flat.shape.size())
      throw Error("ts.tensor: the data is ragged: a number at depth " + std::to_string(depth) +
                  " where the first element had " + std::to_string(flat.shape.size()) + " dims");
    flat.shape_known = true;
    const Scalar s = scalar_from(value, "ts.tensor");
    flat.any_bool |= s.kind() == Scalar::Kind::Bool;
    flat.any_int |= s.kind() == Scalar::Kind::Int;
    flat.any_float |= s.kind() == Scalar::Kind::Float;
    flat.floats.push_back(s.to_double());
    flat.ints.push_back(s.kind() == Scalar::Kind::Float ? 0 : s.to_int());
    flat.bools.push_back(s.kind() == Scalar::Kind::Bool && s.to_bool());
    return;
  }
  const auto length = static_cast<int64_t>(nb::len(value));
  if (depth < flat.shape.size()) {
    if (flat.shape[depth] != length) ragged(flat, depth, length);
  } else if (flat.shape_known) {
    throw Error("ts.tensor: the data is ragged: a sequence at depth " + std::to_string(depth) +
                " where the first element had " + std::to_string(flat.shape.size()) + " dims");
  } else {
    flat.shape.push_back(length);
  }
  if (length == 0) flat.shape_known = true;  // an empty sequence ends the shape
  for (nb::handle item : nb::iter(value)) flatten(item, depth + 1, flat);
}

Tensor from_python_data(nb::handle data, TensorOptions options) {
  FlatData flat;
  flatten(data, 0, flat);
  DType inferred = flat.any_float  ? kDefaultFloat
                   : flat.any_int  ? kInt64
                   : flat.any_bool ? kBool
                                   : kDefaultFloat;
  if (!options.has_dtype) options.dtype(inferred);
  if (inferred == kBool) return from_values(flat.bools, flat.shape, options);
  if (inferred == kInt64) return from_values(flat.ints, flat.shape, options);
  return from_values(flat.floats, flat.shape, options);
}

}  // namespace

Tensor tensor_from(nb::handle data, const std::optional<DType>& dtype,
                   const std::optional<std::string>& device) {
  TensorOptions options = options_from(dtype, device);
  if (nb::isinstance<Tensor>(data) || nb::hasattr(data, "__dlpack__")) {
    // A copy (ts.tensor never shares memory; ts.from_dlpack does), in the requested dtype and place.
    const Tensor source = tensor_from_dlpack(data);
    return without_gil([&] {
      Tensor out = device ? source.to(*device) : source;
      out = dtype ? out.to(*dtype) : out;
      const bool converted = out.impl() != source.impl() || out.local_impl() != source.local_impl();
      return converted ? out : out.clone();
    });
  }
  return from_python_data(data, options);
}

void bind_factories(nb::module_& m) {
  // Factories taking a shape share their keywords: dtype=, device=, requires_grad=.
  const auto with_grad = [](Tensor t, bool requires_grad) {
    if (requires_grad) t.requires_grad_(true);
    return t;
  };
#define TESSERA_PY_SHAPED(name, call, doc)                                                           \
  m.def(                                                                                             \
      name,                                                                                          \
      [with_grad](nb::args size, std::optional<DType> dtype, std::optional<std::string> device,      \
                  bool requires_grad) {                                                              \
        const SymShape shape = shape_from_args(size, name);                                          \
        const TensorOptions options = options_from(dtype, device);                                   \
        return with_grad(without_gil([&] { return call; }), requires_grad);                          \
      },                                                                                             \
      nb::arg("size"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(), \
      nb::arg("requires_grad") = false, doc)
  // Inside a LocalMode these make local tensors over its ranks, as do sizes given as ts.LocalInts.
#define TESSERA_PY_RANDOM                                                                         \
  " Each rank draws from its own generator: the same numbers unless ts.manual_seed seeded ranks " \
  "differently."
#define TESSERA_PY_LOCAL \
  " Inside a ts.LocalMode (or with a ts.LocalInt size) it is a local tensor, one shard per rank."
  TESSERA_PY_SHAPED(
      "empty", tessera::empty(shape, options),
      "A tensor of the given size whose values are not set (float32 unless dtype says)." TESSERA_PY_LOCAL);
  TESSERA_PY_SHAPED("zeros", tessera::zeros(shape, options),
                    "A tensor of the given size filled with 0 (float32 unless dtype says)." TESSERA_PY_LOCAL);
  TESSERA_PY_SHAPED("ones", tessera::ones(shape, options),
                    "A tensor of the given size filled with 1 (float32 unless dtype says)." TESSERA_PY_LOCAL);
  TESSERA_PY_SHAPED(
      "rand", tessera::rand(shape, options),
      "A tensor of the given size of uniform random numbers in [0, 1) from the default generator "
      "(float dtypes only)." TESSERA_PY_LOCAL TESSERA_PY_RANDOM);
  TESSERA_PY_SHAPED("randn", tessera::randn(shape, options),
                    "A tensor of the given size of standard normal random numbers from the default generator "
                    "(float dtypes only)." TESSERA_PY_LOCAL TESSERA_PY_RANDOM);
#undef TESSERA_PY_SHAPED
  m.def(
      "full",
      [with_grad](nb::handle size, nb::handle fill_value, std::optional<DType> dtype,
                  std::optional<std::string> device, bool requires_grad) {
        const SymShape shape = shape_from_sequence(size, "full");
        const Scalar value = scalar_from(fill_value, "full");
        return with_grad(
            without_gil([&] { return tessera::full(shape, value, options_from(dtype, device)); }),
            requires_grad);
      },
      nb::arg("size"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      "A tensor of the given size filled with fill_value; the dtype follows the value (bool, int64 or "
      "float32) "
      "unless dtype says. A ts.LocalInt fill_value gives each rank its own value." TESSERA_PY_LOCAL);
  m.def(
      "arange",
      [](nb::handle start, nb::handle end, nb::handle step, std::optional<DType> dtype,
         std::optional<std::string> device) {
        const TensorOptions options = options_from(dtype, device);
        if (end.is_none()) return tessera::arange(scalar_from(start, "arange"), options);  // arange(end)
        return tessera::arange(scalar_from(start, "arange"), scalar_from(end, "arange"),
                               scalar_from(step, "arange"), options);
      },
      nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = 1, nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      "A 1-d tensor of start, start + step, ... below end (arange(n): 0 .. n-1); int64 when all three are "
      "ints, "
      "else float32, unless dtype says." TESSERA_PY_LOCAL);
  m.def(
      "eye",
      [](int64_t n, std::optional<int64_t> columns, std::optional<DType> dtype,
         std::optional<std::string> device) {
        return tessera::eye(n, columns.value_or(n), options_from(dtype, device));
      },
      nb::arg("n"), nb::arg("m") = nb::none(), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(),
      "An n x m (n x n by default) matrix with ones on the diagonal and zeros elsewhere." TESSERA_PY_LOCAL);
#undef TESSERA_PY_LOCAL
#undef TESSERA_PY_RANDOM
  def_like_factories<Tensor>(m);
  m.def(
      "tensor",
      [with_grad](nb::handle data, std::optional<DType> dtype, std::optional<std::string> device,
                  bool requires_grad) { return with_grad(tensor_from(data, dtype, device), requires_grad); },
      nb::arg("data"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false,
      "A new tensor holding a copy of `data`: nested lists of numbers, a number, a NumPy array or a tensor.");
  m.def(
      "as_tensor",
      [](nb::handle data, std::optional<DType> dtype, std::optional<std::string> device) -> nb::object {
        // A tensor, or a DLPack producer (a NumPy array), already in the dtype and place asked for is
        // shared, not copied; anything else is converted (a copy), as PyTorch's as_tensor does.
        if (nb::isinstance<Tensor>(data)) {
          const Tensor& t = nb::cast<const Tensor&>(data);
          if ((!dtype || *dtype == t.dtype()) && (!device || *device == t.backend())) return nb::borrow(data);
        }
        if (!nb::isinstance<Tensor>(data) && !nb::hasattr(data, "__dlpack__"))
          return nb::cast(tensor_from(data, dtype, device));
        const Tensor shared = tensor_from_dlpack(data);
        return nb::cast(without_gil([&] {
          Tensor out = device ? shared.to(*device) : shared;
          return dtype ? out.to(*dtype) : out;
        }));
      },
      nb::arg("data"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      "A tensor of `data` that shares its memory where it can: a tensor or a NumPy array already of the "
      "dtype and device asked for is shared; anything else (lists, numbers, other dtypes) is copied.");
  m.def(
      "manual_seed", [](nb::handle seed) { tessera::manual_seed(sym_int_from(seed)); }, nb::arg("seed"),
      "Seeds the random numbers; a ts.LocalInt seeds each rank of the active LocalMode differently.");
}

}  // namespace tessera::python
