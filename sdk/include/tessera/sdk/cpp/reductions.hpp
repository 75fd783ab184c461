// The reductions of KERNELS.md (sum, prod, mean, max, min, argmax, argmin, all, any), for every
// backend that has them: the argument rules, checked on the host, and the folds themselves, which
// compile as host code and, under nvcc, as device code too.
//
// A fold visits its row in row-major order and accumulates in the output type: that order is the
// contract ("results are reproducible bit for bit"), so a backend that folds with these gets the
// CPU backend's bits. It does not reorder (no pairwise, tree or parallel sums).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/host_device.hpp"
#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::sdk {

// ---- Arguments: one input, one contiguous output of the leading dims' element count.

// What a reduction call reduces: the input's last `reduced_ndim` dims, one output element per index
// of the `outer_ndim` before them.
struct ReductionDims {
  int outer_ndim;
  int reduced_ndim;
};

// Checks a call of `op` with input dtype `input` and output dtype `output`: the INT attribute
// reduce_ndim within the input's ndim, the output's element count, a contiguous output and, for
// ops without an identity (`needs_nonempty`), a non-empty row.
inline ReductionDims checked_reduction(const KernelArgs& args, const char* op, DLDataType input,
                                       DLDataType output, bool needs_nonempty,
                                       const ArityCheck& expect_arity) {
  expect_arity(args, op, 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  expect_dtype(op, "input 0", a, input);
  expect_dtype(op, "output", out, output);
  const int64_t reduce_ndim = int_attr(args, op, "reduce_ndim");
  if (reduce_ndim < 0 || reduce_ndim > a.ndim)
    fail_invalid(std::string(op) + ": attribute 'reduce_ndim' is " + std::to_string(reduce_ndim) +
                 ", expected 0.." + std::to_string(a.ndim) + " (the ndim of input 0, shape " + shape_text(a) +
                 ")");
  const int r = static_cast<int>(reduce_ndim);
  const int outer_ndim = a.ndim - r;
  DLTensor outer = a, reduced = a;  // only their shapes are read
  outer.ndim = outer_ndim;
  reduced.ndim = r;
  reduced.shape = a.shape + outer_ndim;
  reduced.strides = a.strides + outer_ndim;
  const int64_t outer_numel = numel(outer);
  if (numel(out) != outer_numel)
    fail_invalid(std::string(op) + ": output has shape " + shape_text(out) + " (" +
                 std::to_string(numel(out)) + " elements), expected " + std::to_string(outer_numel) +
                 " elements (input 0 has shape " + shape_text(a) + ", reduce_ndim " + std::to_string(r) +
                 ")");
  expect_contiguous(op, "output", out);
  if (needs_nonempty && numel(reduced) == 0)
    fail_invalid(std::string(op) + ": the reduced dims " + shape_text(reduced) + " of input 0 (shape " +
                 shape_text(a) + ") are empty, expected at least one element: " + op + " has no identity");
  return ReductionDims{outer_ndim, r};
}

// The same for a kernel of `Fold` (below) on dtype T.
template <class Fold, class T>
ReductionDims checked_reduction(const KernelArgs& args, const ArityCheck& expect_arity) {
  return checked_reduction(args, Fold::name, dtype_of<T>(), dtype_of<typename Fold::template Out<T>>(),
                           Fold::needs_nonempty, expect_arity);
}

// ---- The folds. Each takes a row, the reduced elements under one outer index, as any type with
// `size` (its element count) and `for_each(f)`, which calls f(k, x) for every element x in row-major
// order, k being its index within the row.

// Integer and bool sums and products are int64, so that summing int32 or bool data does not wrap.
template <class T>
using Widened = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

struct SumFold {
  static constexpr const char* name = "sum";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = Widened<T>;
  template <template <class> class Row, class T>
  TESSERA_SDK_HOST_DEVICE static Out<T> fold(const Row<T>& row) {
    Out<T> acc = 0;
    row.for_each([&](int64_t, T x) { acc = hd::arithmetic(acc, static_cast<Out<T>>(x), '+'); });
    return acc;
  }
};

struct ProdFold {
  static constexpr const char* name = "prod";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = Widened<T>;
  template <template <class> class Row, class T>
  TESSERA_SDK_HOST_DEVICE static Out<T> fold(const Row<T>& row) {
    Out<T> acc = 1;
    row.for_each([&](int64_t, T x) { acc = hd::arithmetic(acc, static_cast<Out<T>>(x), '*'); });
    return acc;
  }
};

// The sum (in its sequential order) divided by the count; an empty row is NaN.
struct MeanFold {
  static constexpr const char* name = "mean";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = T;
  template <template <class> class Row, class T>
  TESSERA_SDK_HOST_DEVICE static T fold(const Row<T>& row) {
    if (row.size == 0) return hd::quiet_nan<T>();
    return SumFold::fold(row) / static_cast<T>(row.size);
  }
};

// max, min, argmax and argmin are one scan that keeps the value or its index. The first NaN, once
// seen, is kept (NaN propagates); strict comparisons keep the first occurrence of the extreme.
template <bool kMax, bool kIndex>
struct ExtremeFold {
  static constexpr const char* name = kMax ? (kIndex ? "argmax" : "max") : (kIndex ? "argmin" : "min");
  static constexpr bool needs_nonempty = true;
  template <class T>
  using Out = std::conditional_t<kIndex, int64_t, T>;
  template <template <class> class Row, class T>
  TESSERA_SDK_HOST_DEVICE static Out<T> fold(const Row<T>& row) {
    T best{};
    int64_t index = 0;
    row.for_each([&](int64_t k, T x) {
      const bool better = kMax ? best < x : x < best;
      if (k == 0 || (!hd::is_nan(best) && (hd::is_nan(x) || better))) {
        best = x;
        index = k;
      }
    });
    if constexpr (kIndex)
      return index;
    else
      return best;
  }
};
using MaxFold = ExtremeFold<true, false>;
using MinFold = ExtremeFold<false, false>;
using ArgmaxFold = ExtremeFold<true, true>;
using ArgminFold = ExtremeFold<false, true>;

template <bool kAll>
struct LogicalFold {
  static constexpr const char* name = kAll ? "all" : "any";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = bool;
  template <template <class> class Row, class T>
  TESSERA_SDK_HOST_DEVICE static bool fold(const Row<T>& row) {
    bool acc = kAll;
    row.for_each([&](int64_t, T x) { acc = kAll ? (acc && x) : (acc || x); });
    return acc;
  }
};
using AllFold = LogicalFold<true>;
using AnyFold = LogicalFold<false>;

// ---- The catalogue: every reduction with the dtypes KERNELS.md gives it. A backend writes its
// kernel once, as Kernel<Fold, T>::run(KernelArgs&), and registers them all with
//   sdk::add_reduction_kernels<MyReduction>(builder);

template <template <class Fold, class T> class Kernel>
void add_reduction_kernels(BackendBuilder& b) {
  add_op_kernels<Kernel, SumFold, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, ProdFold, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, MeanFold, float, double>(b);
  add_op_kernels<Kernel, MaxFold, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, MinFold, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, ArgmaxFold, float, double, int32_t, int64_t>(b);
  add_op_kernels<Kernel, ArgminFold, float, double, int32_t, int64_t>(b);
  add_op_kernels<Kernel, AllFold, bool>(b);
  add_op_kernels<Kernel, AnyFold, bool>(b);
}

}  // namespace tessera::sdk
