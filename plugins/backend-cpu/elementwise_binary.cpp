// Element-wise a (op) b -> out: arithmetic, maximum/minimum, bitwise, pow and comparisons.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "scalar.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace tessera::cpu {
namespace {

// On bool, add and maximum are "or", mul and minimum are "and" (what 0/1 arithmetic saturates to).
struct Add {
  static constexpr const char* name = "add";
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else
      return wrap_add(a, b);
  }
};

struct Sub {
  static constexpr const char* name = "sub";
  template <class T>
  static T apply(T a, T b) {
    return wrap_sub(a, b);
  }
};

struct Mul {
  static constexpr const char* name = "mul";
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else
      return wrap_mul(a, b);
  }
};

struct Div {
  static constexpr const char* name = "div";
  template <class T>
  static T apply(T a, T b) {
    return a / b;
  }
};

// A NaN operand wins, as in PyTorch (std::max would return whichever the comparison picks).
struct Maximum {
  static constexpr const char* name = "maximum";
  template <class T>
  static T apply(T a, T b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a < b ? b : a;
  }
};

struct Minimum {
  static constexpr const char* name = "minimum";
  template <class T>
  static T apply(T a, T b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return b < a ? b : a;
  }
};

// Bitwise ops for integers and bool (the BAND/BOR/BXOR reductions of collectives).
struct BitwiseAnd {
  static constexpr const char* name = "bitwise_and";
  template <class T>
  static T apply(T a, T b) {
    return static_cast<T>(a & b);
  }
};

struct BitwiseOr {
  static constexpr const char* name = "bitwise_or";
  template <class T>
  static T apply(T a, T b) {
    return static_cast<T>(a | b);
  }
};

struct BitwiseXor {
  static constexpr const char* name = "bitwise_xor";
  template <class T>
  static T apply(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};

// Integer pow by repeated squaring in the unsigned type, so overflow wraps instead of being UB.
struct Pow {
  static constexpr const char* name = "pow";
  template <class T>
  static T apply(T base, T exponent) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(base, exponent);
    } else {
      if (exponent < 0)
        fail(std::string("pow: exponent ") + std::to_string(exponent) + " is negative, expected >= 0 for " +
             dtype_name(sdk::dtype_of<T>()) + " operands");
      using U = std::make_unsigned_t<T>;
      U result = 1;
      U square = static_cast<U>(base);
      for (T e = exponent; e != 0; e >>= 1) {
        if (e & 1) result *= square;
        square *= square;
      }
      return static_cast<T>(result);
    }
  }
};

struct Eq {
  static constexpr const char* name = "eq";
  template <class T>
  static bool apply(T a, T b) {
    return a == b;
  }
};
struct Ne {
  static constexpr const char* name = "ne";
  template <class T>
  static bool apply(T a, T b) {
    return a != b;
  }
};
struct Lt {
  static constexpr const char* name = "lt";
  template <class T>
  static bool apply(T a, T b) {
    return a < b;
  }
};
struct Le {
  static constexpr const char* name = "le";
  template <class T>
  static bool apply(T a, T b) {
    return a <= b;
  }
};
struct Gt {
  static constexpr const char* name = "gt";
  template <class T>
  static bool apply(T a, T b) {
    return a > b;
  }
};
struct Ge {
  static constexpr const char* name = "ge";
  template <class T>
  static bool apply(T a, T b) {
    return a >= b;
  }
};

template <class Op, class T>
void binary_kernel(sdk::KernelArgs& args) {
  using R = decltype(Op::apply(T{}, T{}));
  expect_arity(args, Op::name, 2, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& b = args.input(1);
  const DLTensor& out = args.output(0);
  expect_dtype(Op::name, "input 0", a, sdk::dtype_of<T>());
  expect_dtype(Op::name, "input 1", b, sdk::dtype_of<T>());
  expect_dtype(Op::name, "output", out, sdk::dtype_of<R>());
  expect_shape(Op::name, "input 1", b, a, "input 0");
  expect_shape(Op::name, "output", out, a, "input 0");

  const T* x = sdk::data_of<const T>(a);
  const T* y = sdk::data_of<const T>(b);
  R* z = sdk::data_of<R>(out);
  if (sdk::is_contiguous(a) && sdk::is_contiguous(b) && sdk::is_contiguous(out)) {
    // Flat loops the compiler vectorises. In-place (out is a, as the collective executor reduces)
    // gets its own loop: with z == x the general one would fail the vectoriser's overlap check.
    const int64_t n = sdk::numel(out);
    if constexpr (std::is_same_v<R, T>) {
      if (static_cast<const void*>(z) == static_cast<const void*>(x) && x != y) {
        for (int64_t i = 0; i < n; ++i) z[i] = Op::apply(z[i], y[i]);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) z[i] = Op::apply(x[i], y[i]);
    return;
  }
  sdk::for_each_offset<3>(out.ndim, out.shape, {&a, &b, &out},
                          [&](const std::array<int64_t, 3>& o) { z[o[2]] = Op::apply(x[o[0]], y[o[1]]); });
}

template <class Op, class... Ts>
void add_kernels(sdk::BackendBuilder& b) {
  (b.kernel<&binary_kernel<Op, Ts>>(Op::name, sdk::dtype_of<Ts>()), ...);
}

}  // namespace

void register_binary_kernels(sdk::BackendBuilder& b) {
  add_kernels<Add, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Sub, float, double, int32_t, int64_t>(b);
  add_kernels<Mul, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Maximum, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Minimum, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Div, float, double>(b);
  add_kernels<BitwiseAnd, int32_t, int64_t, bool>(b);
  add_kernels<BitwiseOr, int32_t, int64_t, bool>(b);
  add_kernels<BitwiseXor, int32_t, int64_t, bool>(b);
  add_kernels<Pow, float, double, int32_t, int64_t>(b);
  add_kernels<Eq, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Ne, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Lt, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Le, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Gt, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Ge, float, double, int32_t, int64_t, bool>(b);
}

}  // namespace tessera::cpu
