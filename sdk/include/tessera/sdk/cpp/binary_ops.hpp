// The element-wise binary ops of KERNELS.md (arithmetic, maximum/minimum, bitwise, pow of floats,
// comparisons) as one function of two values each, for every backend that has them: host code and,
// under nvcc, device code too. A backend writes its kernel once, as Kernel<Op, T>::run(KernelArgs&)
// computing Op::apply(a, b) into an Op::Out<T> output, and registers every op on its dtypes with
//   sdk::add_binary_kernels<MyBinary>(builder);
// Integer pow is not among them: it must report a negative exponent, which a device thread cannot
// throw, so each backend registers its own (same rule: the first negative exponent in row-major
// order is the error).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/host_device.hpp"
#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::sdk {

namespace binary_ops {

// An op's result type: T, or bool for comparisons.
template <class T>
using Same = T;
template <class T>
using Bool = bool;

// A NaN operand wins maximum and minimum, the first if both are (as in PyTorch; std::max, fmax and
// fmin would drop it or pick either).
template <class T>
TESSERA_SDK_HOST_DEVICE T extreme(T a, T b, bool larger) {
  if (hd::is_nan(a)) return a;
  if (hd::is_nan(b)) return b;
  return larger ? (a < b ? b : a) : (b < a ? b : a);
}

// One op: its KERNELS.md name, result type (Same: T, Bool: bool) and value.
// Name and Result are a struct name and a template name, which cannot take parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define TESSERA_SDK_BINARY_OP(Name, text, Result, expr)     \
  struct Name {                                             \
    static constexpr const char* name = text;               \
    template <class T>                                      \
    using Out = Result<T>;                                  \
    template <class T>                                      \
    TESSERA_SDK_HOST_DEVICE static Out<T> apply(T a, T b) { \
      return expr;                                          \
    }                                                       \
  };
// NOLINTEND(bugprone-macro-parentheses)
TESSERA_SDK_BINARY_OP(Add, "add", Same, hd::arithmetic(a, b, '+'))
TESSERA_SDK_BINARY_OP(Sub, "sub", Same, hd::arithmetic(a, b, '-'))
TESSERA_SDK_BINARY_OP(Mul, "mul", Same, hd::arithmetic(a, b, '*'))
// IEEE division (correctly rounded on the host, and under nvcc's default -prec-div=true).
TESSERA_SDK_BINARY_OP(Div, "div", Same, hd::settled(a / b))
TESSERA_SDK_BINARY_OP(Maximum, "maximum", Same, extreme(a, b, true))
TESSERA_SDK_BINARY_OP(Minimum, "minimum", Same, extreme(a, b, false))
// Bitwise ops for integers and bool (the BAND/BOR/BXOR reductions of collectives), and comparisons.
TESSERA_SDK_BINARY_OP(BitwiseAnd, "bitwise_and", Same, static_cast<T>(a& b))
TESSERA_SDK_BINARY_OP(BitwiseOr, "bitwise_or", Same, static_cast<T>(a | b))
TESSERA_SDK_BINARY_OP(BitwiseXor, "bitwise_xor", Same, static_cast<T>(a ^ b))
TESSERA_SDK_BINARY_OP(Eq, "eq", Bool, a == b)
TESSERA_SDK_BINARY_OP(Ne, "ne", Bool, a != b)
TESSERA_SDK_BINARY_OP(Lt, "lt", Bool, a < b)
TESSERA_SDK_BINARY_OP(Le, "le", Bool, a <= b)
TESSERA_SDK_BINARY_OP(Gt, "gt", Bool, a > b)
TESSERA_SDK_BINARY_OP(Ge, "ge", Bool, a >= b)
#undef TESSERA_SDK_BINARY_OP

// Floating pow only (see the top of the file).
struct Pow {
  static constexpr const char* name = "pow";
  template <class T>
  using Out = Same<T>;
  template <class T>
  TESSERA_SDK_HOST_DEVICE static T apply(T base, T exponent) {
    static_assert(std::is_floating_point_v<T>, "integer pow is each backend's own kernel");
    return hd::pow(base, exponent);
  }
};

}  // namespace binary_ops

// Two inputs of dtype T and one output of dtype R, all three of one shape (the core broadcasts with
// stride 0 before calling).
template <class T, class R>
void expect_binary(const KernelArgs& args, const char* op, const ArityCheck& expect_arity) {
  expect_arity(args, op, 2, 1);
  expect_dtype(op, "input 0", args.input(0), dtype_of<T>());
  expect_dtype(op, "input 1", args.input(1), dtype_of<T>());
  expect_dtype(op, "output", args.output(0), dtype_of<R>());
  expect_shape(op, "input 1", args.input(1), args.input(0), "input 0");
  expect_shape(op, "output", args.output(0), args.input(0), "input 0");
}

template <template <class Op, class T> class Kernel>
void add_binary_kernels(BackendBuilder& b) {
  using namespace binary_ops;
  add_op_kernels<Kernel, Add, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Sub, float, double, int32_t, int64_t>(b);
  add_op_kernels<Kernel, Mul, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Maximum, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Minimum, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Div, float, double>(b);
  add_op_kernels<Kernel, BitwiseAnd, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, BitwiseOr, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, BitwiseXor, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Pow, float, double>(b);
  add_op_kernels<Kernel, Eq, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Ne, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Lt, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Le, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Gt, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, Ge, float, double, int32_t, int64_t, bool>(b);
}

}  // namespace tessera::sdk
