// Reductions over the trailing `reduce_ndim` dims of the input, one output element per index of
// the leading dims, written to a contiguous output in row-major order (sdk/KERNELS.md).
//
// One thread per output element, folding its row sequentially in row-major order of the reduced
// dims and accumulating in the output type. That order is the contract ("results are reproducible
// bit for bit") and is what the CPU backend does: a tree reduction (CUB's DeviceSegmentedReduce, a
// warp shuffle) adds floats in a different order and so changes the bits of sum, prod and mean.
// max, min, all and any could use one without changing a bit, but their first-NaN rule and the
// argmax/argmin first-occurrence rule fall out of the sequential fold for free, so every op shares it.
#include <cstdint>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"

namespace tessera::cuda {
namespace {

// Integer and bool sums and products are int64, so that summing int32 or bool data does not wrap.
template <class T>
using Widened = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

template <class T>
__device__ bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return isnan(x);
  else
    return false;
}

// Signed overflow is undefined; the unsigned type wraps, giving the two's-complement result the CPU
// backend gives.
template <class T>
__device__ T plus(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
  else
    return a + b;
}
template <class T>
__device__ T times(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) * static_cast<std::make_unsigned_t<T>>(b));
  else
    return a * b;
}

// The reduced elements under one outer index: `first` points at element [0, ..., 0] of the row.
template <class T>
struct Row {
  const T* first;
  const StridedView* dims;  // the reduced dims of the input (its data pointer is unused)
  int64_t size;

  // Calls f(k, x) for every element x, k being its row-major index within the row.
  template <class F>
  __device__ void for_each(F&& f) const {
    for (int64_t k = 0; k < size; ++k) f(k, first[offset_of(*dims, k)]);
  }
};

struct Sum {
  static constexpr const char* name = "sum";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = Widened<T>;
  template <class T>
  __device__ static Out<T> fold(const Row<T>& row) {
    Out<T> acc = 0;
    row.for_each([&](int64_t, T x) { acc = plus(acc, static_cast<Out<T>>(x)); });
    return acc;
  }
};

struct Prod {
  static constexpr const char* name = "prod";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = Widened<T>;
  template <class T>
  __device__ static Out<T> fold(const Row<T>& row) {
    Out<T> acc = 1;
    row.for_each([&](int64_t, T x) { acc = times(acc, static_cast<Out<T>>(x)); });
    return acc;
  }
};

// The sum (in its sequential order) divided by the count, as the CPU backend computes it; an empty
// row is 0/0, NaN.
struct Mean {
  static constexpr const char* name = "mean";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = T;
  template <class T>
  __device__ static T fold(const Row<T>& row) {
    return Sum::fold(row) / static_cast<T>(row.size);
  }
};

// The first NaN, once seen, is kept: NaN propagates. Strict comparisons keep the first occurrence.
template <bool Greater>
struct Extreme {
  template <class T>
  __device__ static bool better(T x, T best) {
    if constexpr (Greater)
      return best < x;
    else
      return x < best;
  }
  template <class T>
  __device__ static void fold(const Row<T>& row, T& best, int64_t& index) {
    row.for_each([&](int64_t k, T x) {
      if (k == 0 || (!is_nan(best) && (is_nan(x) || better(x, best)))) {
        best = x;
        index = k;
      }
    });
  }
};

// max, min, argmax and argmin are one scan (Extreme) that keeps the value or its index.
template <bool kMax, bool kIndex>
struct ExtremeOp {
  static constexpr const char* name = kMax ? (kIndex ? "argmax" : "max") : (kIndex ? "argmin" : "min");
  static constexpr bool needs_nonempty = true;
  template <class T>
  using Out = std::conditional_t<kIndex, int64_t, T>;
  template <class T>
  __device__ static Out<T> fold(const Row<T>& row) {
    T best{};
    int64_t index = 0;
    Extreme<kMax>::fold(row, best, index);
    if constexpr (kIndex)
      return index;
    else
      return best;
  }
};
using Max = ExtremeOp<true, false>;
using Min = ExtremeOp<false, false>;
using Argmax = ExtremeOp<true, true>;
using Argmin = ExtremeOp<false, true>;

struct All {
  static constexpr const char* name = "all";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = bool;
  template <class T>
  __device__ static bool fold(const Row<T>& row) {
    bool acc = true;
    row.for_each([&](int64_t, T x) { acc = acc && x; });
    return acc;
  }
};

struct Any {
  static constexpr const char* name = "any";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = bool;
  template <class T>
  __device__ static bool fold(const Row<T>& row) {
    bool acc = false;
    row.for_each([&](int64_t, T x) { acc = acc || x; });
    return acc;
  }
};

// The leading `ndim` dims (outer) or trailing ones (inner) of a view, with the same data pointer.
StridedView sub_view(const StridedView& v, int first, int ndim) {
  StridedView sub{};
  sub.data = v.data;
  sub.ndim = ndim;
  int64_t expected = 1;
  sub.contiguous = true;
  for (int d = ndim - 1; d >= 0; --d) {
    sub.shape[d] = v.shape[first + d];
    sub.strides[d] = v.strides[first + d];
    // Row-major without gaps, judged on the dims alone: a dim of size 1 has any stride.
    if (sub.shape[d] != 1 && sub.strides[d] != expected) sub.contiguous = false;
    expected *= sub.shape[d];
  }
  return sub;
}

template <class Op, class T>
__global__ void reduction_device(int64_t outer_numel, StridedView outer, StridedView inner, int64_t inner_numel,
                                 typename Op::template Out<T>* out) {
  const T* a = reinterpret_cast<const T*>(outer.data);
  for (int64_t i = grid_first(); i < outer_numel; i += grid_step())
    out[i] = Op::fold(Row<T>{a + offset_of(outer, i), &inner, inner_numel});
}

template <class Op, class T>
void reduction_kernel(sdk::KernelArgs& args) {
  using R = typename Op::template Out<T>;
  const char* op = Op::name;
  expect_arity(args, op, 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  expect_dtype(op, "input 0", a, sdk::dtype_of<T>());
  expect_dtype(op, "output", out, sdk::dtype_of<R>());
  const int64_t reduce_ndim = int_attr(args, op, "reduce_ndim");
  if (reduce_ndim < 0 || reduce_ndim > a.ndim)
    fail(std::string(op) + ": attribute 'reduce_ndim' is " + std::to_string(reduce_ndim) + ", expected 0.." +
         std::to_string(a.ndim) + " (the ndim of input 0, shape " + shape_text(a) + ")");
  const int r = static_cast<int>(reduce_ndim);
  const int outer_ndim = a.ndim - r;

  const StridedView view = make_view(a, op, "input 0");
  const StridedView outer = sub_view(view, 0, outer_ndim);
  const StridedView inner = sub_view(view, outer_ndim, r);
  const int64_t outer_numel = numel_of(outer);
  const int64_t inner_numel = numel_of(inner);
  if (sdk::numel(out) != outer_numel)
    fail(std::string(op) + ": output has shape " + shape_text(out) + " (" + std::to_string(sdk::numel(out)) +
         " elements), expected " + std::to_string(outer_numel) + " elements (input 0 has shape " + shape_text(a) +
         ", reduce_ndim " + std::to_string(r) + ")");
  expect_contiguous(op, "output", out);
  if (Op::needs_nonempty && inner_numel == 0) {
    DLTensor reduced = a;  // only its shape is read, for the message
    reduced.ndim = r;
    reduced.shape = a.shape + outer_ndim;
    reduced.strides = a.strides + outer_ndim;
    fail(std::string(op) + ": the reduced dims " + shape_text(reduced) + " of input 0 (shape " + shape_text(a) +
         ") are empty, expected at least one element: " + op + " has no identity");
  }
  launch_elements(op, &reduction_device<Op, T>, outer_numel, outer, inner, inner_numel, sdk::data_of<R>(out));
}

template <class Op, class... Ts>
void add_kernels(sdk::BackendBuilder& b) {
  (b.kernel<&reduction_kernel<Op, Ts>>(Op::name, sdk::dtype_of<Ts>()), ...);
}

}  // namespace

void register_reduction_kernels(sdk::BackendBuilder& b) {
  add_kernels<Sum, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Prod, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Mean, float, double>(b);
  add_kernels<Max, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Min, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Argmax, float, double, int32_t, int64_t>(b);
  add_kernels<Argmin, float, double, int32_t, int64_t>(b);
  add_kernels<All, bool>(b);
  add_kernels<Any, bool>(b);
}

}  // namespace tessera::cuda
