// t[key] and t[key] = value as PyTorch reads them: ints select (negative ones count from the end),
// slices narrow with a step, None inserts a dim and ... stands for the dims not named. Every result
// is a view, so assignment writes through it into `t`.
#include <nanobind/stl/string.h>

#include <string>

#include "tensor_indexing.hpp"

namespace tessera::python {
namespace {

bool is_index(nb::handle item) { return PyLong_Check(item.ptr()) || nb::isinstance<LocalInt>(item); }

// The concrete size of `dim`: a slice or negative index needs one.
int64_t concrete_size(const Tensor& t, int64_t dim, const char* what) {
  const SymInt size = t.sym_size(dim);
  if (size.is_local())
    throw Error("t[...]: dim " + std::to_string(dim) + " has a size that differs per rank (" +
                size.to_string() + "); " + what +
                " needs one size; index each shard (t.shard(rank)) instead");
  return size.as_int();
}

[[noreturn]] void out_of_range(int64_t index, int64_t dim, int64_t size) {
  throw nb::index_error(("index " + std::to_string(index) + " is out of range for dim " +
                         std::to_string(dim) + " of size " + std::to_string(size))
                            .c_str());
}

// An out-of-range index raises IndexError, as for any Python sequence: list(t) and `for x in t`
// (which index 0, 1, ... until IndexError) rely on it.
// `dim` is the dim of `t` (a view part-way through the key), `source_dim` the same dim of the
// tensor being indexed, which errors name.
Tensor select_index(const Tensor& t, int64_t dim, nb::handle item, int64_t source_dim) {
  SymInt index = sym_int_from(item);
  if (!index.is_local() && index.as_int() < 0) {
    const int64_t size = concrete_size(t, dim, "a negative index");
    if (index.as_int() < -size) out_of_range(index.as_int(), source_dim, size);
    index = index.as_int() + size;
  } else if (!index.is_local()) {
    // A size that differs per rank is checked per shard by select itself.
    const SymInt size = t.sym_size(dim);
    if (!size.is_local() && index.as_int() >= size.as_int())
      out_of_range(index.as_int(), source_dim, size.as_int());
  }
  return t.select(dim, index);
}

Tensor slice_dim(const Tensor& t, int64_t dim, nb::handle item) {
  Py_ssize_t start = 0, stop = 0, step = 0;
  if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
  if (step <= 0)
    throw nb::value_error(("t[...]: slice step must be positive, got " + std::to_string(step)).c_str());
  if (item.attr("start").is_none() && item.attr("stop").is_none() && step == 1)
    return t;  // `:` keeps any size
  const int64_t size = concrete_size(t, dim, "a slice");
  PySlice_AdjustIndices(static_cast<Py_ssize_t>(size), &start, &stop, step);
  return t.slice(dim, start, std::max<int64_t>(start, stop), step);
}

}  // namespace

Tensor index_tensor(const Tensor& t, nb::handle key) {
  nb::tuple items = PyTuple_Check(key.ptr()) ? nb::borrow<nb::tuple>(key) : nb::make_tuple(key);
  int64_t named = 0;  // dims the key consumes (not None, not ...)
  bool has_ellipsis = false;
  for (nb::handle item : items) {
    if (item.is(Py_Ellipsis)) {
      if (has_ellipsis) throw nb::index_error("t[...]: an index can only have a single ellipsis ('...')");
      has_ellipsis = true;
    } else if (!item.is_none()) {
      ++named;
    }
  }
  if (named > t.dim())
    throw nb::index_error(("t[...]: too many indices for a tensor of " + std::to_string(t.dim()) +
                           " dims: " + std::to_string(named) + " were given")
                              .c_str());
  Tensor out = t;
  int64_t dim = 0;         // in `out`
  int64_t source_dim = 0;  // in `t`
  for (nb::handle item : items) {
    if (item.is(Py_Ellipsis)) {
      dim += t.dim() - named;
      source_dim += t.dim() - named;
    } else if (item.is_none()) {
      out = out.unsqueeze(dim++);
    } else if (is_index(item)) {
      out = select_index(out, dim, item, source_dim++);
    } else if (PySlice_Check(item.ptr())) {
      ++source_dim;
      out = slice_dim(out, dim++, item);
    } else {
      throw nb::type_error(("t[...]: an index must be an int, a slice, None or ..., got " +
                            nb::cast<std::string>(nb::repr(item)))
                               .c_str());
    }
  }
  return out;
}

void assign_index(Tensor& t, nb::handle key, nb::handle value) {
  Tensor view = index_tensor(t, key);
  if (nb::isinstance<Tensor>(value)) {
    view.copy_(nb::cast<const Tensor&>(value));
  } else {
    view.fill_(scalar_from(value, "t[...] = value"));
  }
}

}  // namespace tessera::python
