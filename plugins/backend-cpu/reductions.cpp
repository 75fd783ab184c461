// Reductions over the trailing `reduce_ndim` dims of the input; one output element per index of the
// leading dims, written to a contiguous output in row-major order.
//
// Every fold visits its row in row-major order and accumulates in the output type, so results are
// reproducible bit for bit (no pairwise or parallel reordering).
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "scalar.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "views.hpp"

namespace tessera::cpu {
namespace {

// The reduced elements under one outer index.
template <class T>
struct Row {
  const T* first;
  const DLTensor* dims;  // the reduced dims of the input; offsets are relative to `first`
  int64_t size;

  // Calls f(k, x) for every element x, k being its row-major index within the row.
  template <class F>
  void for_each(F&& f) const {
    int64_t k = 0;
    sdk::for_each_offset<1>(dims->ndim, dims->shape, {dims},
                            [&](const std::array<int64_t, 1>& o) { f(k++, first[o[0]]); });
  }
};

// Integer and bool sums and products are int64, so that summing int32 or bool data does not wrap.
template <class T>
using Widened = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

struct Sum {
  static constexpr const char* name = "sum";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = Widened<T>;
  template <class T>
  static Out<T> fold(const Row<T>& row) {
    Out<T> acc = 0;
    row.for_each([&](int64_t, T x) { acc = wrap_add(acc, static_cast<Out<T>>(x)); });
    return acc;
  }
};

struct Prod {
  static constexpr const char* name = "prod";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = Widened<T>;
  template <class T>
  static Out<T> fold(const Row<T>& row) {
    Out<T> acc = 1;
    row.for_each([&](int64_t, T x) { acc = wrap_mul(acc, static_cast<Out<T>>(x)); });
    return acc;
  }
};

struct Mean {
  static constexpr const char* name = "mean";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = T;
  template <class T>
  static T fold(const Row<T>& row) {
    if (row.size == 0) return std::numeric_limits<T>::quiet_NaN();
    return Sum::fold(row) / static_cast<T>(row.size);
  }
};

// The first NaN, once seen, is kept: NaN propagates.
struct Max {
  static constexpr const char* name = "max";
  static constexpr bool needs_nonempty = true;
  template <class T>
  using Out = T;
  template <class T>
  static T fold(const Row<T>& row) {
    T best{};
    row.for_each([&](int64_t k, T x) {
      if (k == 0 || (!is_nan(best) && (is_nan(x) || best < x))) best = x;
    });
    return best;
  }
};

struct Min {
  static constexpr const char* name = "min";
  static constexpr bool needs_nonempty = true;
  template <class T>
  using Out = T;
  template <class T>
  static T fold(const Row<T>& row) {
    T best{};
    row.for_each([&](int64_t k, T x) {
      if (k == 0 || (!is_nan(best) && (is_nan(x) || x < best))) best = x;
    });
    return best;
  }
};

// Strict comparisons keep the first occurrence; the first NaN wins over everything.
struct Argmax {
  static constexpr const char* name = "argmax";
  static constexpr bool needs_nonempty = true;
  template <class T>
  using Out = int64_t;
  template <class T>
  static int64_t fold(const Row<T>& row) {
    T best{};
    int64_t index = 0;
    row.for_each([&](int64_t k, T x) {
      if (k == 0 || (!is_nan(best) && (is_nan(x) || best < x))) {
        best = x;
        index = k;
      }
    });
    return index;
  }
};

struct Argmin {
  static constexpr const char* name = "argmin";
  static constexpr bool needs_nonempty = true;
  template <class T>
  using Out = int64_t;
  template <class T>
  static int64_t fold(const Row<T>& row) {
    T best{};
    int64_t index = 0;
    row.for_each([&](int64_t k, T x) {
      if (k == 0 || (!is_nan(best) && (is_nan(x) || x < best))) {
        best = x;
        index = k;
      }
    });
    return index;
  }
};

struct All {
  static constexpr const char* name = "all";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = bool;
  static bool fold(const Row<bool>& row) {
    bool acc = true;
    row.for_each([&](int64_t, bool x) { acc = acc && x; });
    return acc;
  }
};

struct Any {
  static constexpr const char* name = "any";
  static constexpr bool needs_nonempty = false;
  template <class T>
  using Out = bool;
  static bool fold(const Row<bool>& row) {
    bool acc = false;
    row.for_each([&](int64_t, bool x) { acc = acc || x; });
    return acc;
  }
};

struct Plan {
  DLTensor outer;  // the leading dims of the input: one output element each
  DLTensor inner;  // the reduced dims
  int64_t inner_numel;
};

Plan plan_reduction(const sdk::KernelArgs& args, const char* op, DLDataType input_dtype,
                    DLDataType output_dtype, bool needs_nonempty) {
  expect_arity(args, op, 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  expect_dtype(op, "input 0", a, input_dtype);
  expect_dtype(op, "output", out, output_dtype);
  const int64_t reduce_ndim = int_attr(args, op, "reduce_ndim");
  if (reduce_ndim < 0 || reduce_ndim > a.ndim)
    fail(std::string(op) + ": attribute 'reduce_ndim' is " + std::to_string(reduce_ndim) + ", expected 0.." +
         std::to_string(a.ndim) + " (the ndim of input 0, shape " + shape_text(a) + ")");
  const int r = static_cast<int>(reduce_ndim);
  const Plan plan{leading_dims(a, a.ndim - r), trailing_dims(a, r), sdk::numel(trailing_dims(a, r))};

  const int64_t outer_numel = sdk::numel(plan.outer);
  if (sdk::numel(out) != outer_numel)
    fail(std::string(op) + ": output has shape " + shape_text(out) + " (" + std::to_string(sdk::numel(out)) +
         " elements), expected " + std::to_string(outer_numel) + " elements (input 0 has shape " +
         shape_text(a) + ", reduce_ndim " + std::to_string(r) + ")");
  expect_contiguous(op, "output", out);
  if (needs_nonempty && plan.inner_numel == 0)
    fail(std::string(op) + ": the reduced dims " + shape_text(plan.inner) + " of input 0 (shape " +
         shape_text(a) + ") are empty, expected at least one element: " + op + " has no identity");
  return plan;
}

template <class Op, class T>
void reduction_kernel(sdk::KernelArgs& args) {
  using R = typename Op::template Out<T>;
  const Plan plan =
      plan_reduction(args, Op::name, sdk::dtype_of<T>(), sdk::dtype_of<R>(), Op::needs_nonempty);
  const T* a = sdk::data_of<const T>(args.input(0));
  R* out = sdk::data_of<R>(args.output(0));
  int64_t i = 0;
  sdk::for_each_offset<1>(plan.outer.ndim, plan.outer.shape, {&plan.outer},
                          [&](const std::array<int64_t, 1>& o) {
                            out[i++] = Op::fold(Row<T>{a + o[0], &plan.inner, plan.inner_numel});
                          });
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

}  // namespace tessera::cpu
