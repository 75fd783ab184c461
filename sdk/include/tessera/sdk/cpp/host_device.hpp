// TESSERA_SDK_HOST_DEVICE marks SDK helpers that a backend may call from host code and, compiled by
// nvcc, from device code too (the folds of reductions.hpp, the rows of softmax.hpp, the ops of
// unary_ops.hpp and binary_ops.hpp). Elsewhere it is empty. sdk::hd holds what they compute with:
// the scalar arithmetic every backend must agree on bit for bit, and the math functions (the host
// libm's on the host, CUDA's on a device: within an ulp or two of each other, not bit-identical).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define TESSERA_SDK_HOST_DEVICE __host__ __device__
#else
#define TESSERA_SDK_HOST_DEVICE
#endif

namespace tessera::sdk::hd {

#if defined(__CUDA_ARCH__)
#define TESSERA_SDK_HD_MATH(name)       \
  template <class T>                    \
  TESSERA_SDK_HOST_DEVICE T name(T x) { \
    return ::name(x);                   \
  }
#else
#define TESSERA_SDK_HD_MATH(name)       \
  template <class T>                    \
  TESSERA_SDK_HOST_DEVICE T name(T x) { \
    return std::name(x);                \
  }
#endif
TESSERA_SDK_HD_MATH(exp)
TESSERA_SDK_HD_MATH(log)
TESSERA_SDK_HD_MATH(sqrt)
TESSERA_SDK_HD_MATH(tanh)
TESSERA_SDK_HD_MATH(erf)
TESSERA_SDK_HD_MATH(fabs)
TESSERA_SDK_HD_MATH(sin)
TESSERA_SDK_HD_MATH(cos)
#undef TESSERA_SDK_HD_MATH

template <class T>
TESSERA_SDK_HOST_DEVICE T pow(T base, T exponent) {
#if defined(__CUDA_ARCH__)
  return ::pow(base, exponent);
#else
  return std::pow(base, exponent);
#endif
}

template <class T>
TESSERA_SDK_HOST_DEVICE bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;  // IEEE: only NaN differs from itself (no fast-math anywhere in Tessera)
  else
    return false;
}

// Signed overflow is undefined, so integer arithmetic goes through the unsigned type, whose overflow
// wraps: the two's-complement result PyTorch gives.
template <class T>
TESSERA_SDK_HOST_DEVICE T wrapped(T a, T b, char op) {
  using U = std::make_unsigned_t<T>;
  const U x = static_cast<U>(a), y = static_cast<U>(b);
  return static_cast<T>(op == '+' ? U(x + y) : op == '-' ? U(x - y) : U(x * y));
}

// The positive quiet NaN (what std::numeric_limits gives, which device code cannot call).
template <class T>
TESSERA_SDK_HOST_DEVICE T quiet_nan() {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a float32 or float64 element");
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const Bits bits = sizeof(T) == 4 ? Bits(0x7fc00000u) : Bits(0x7ff8000000000000ull);
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

// What a floating operation gives when its result r is a NaN: the positive quiet NaN. IEEE 754
// leaves open which NaN comes out: hardware keeps one operand's payload (and sign), and the compiler
// may swap the operands of a commutative + or * from one loop of a kernel to the next, so one sum
// computed by a replay and by a batched evaluation of a schedule (or on two CPUs) came out with
// different bits. One NaN for every NaN result gives the same bits everywhere, at the price of one
// compare and one select per element (keeping the first NaN operand's payload instead cost twice
// as much again).
template <class T>
TESSERA_SDK_HOST_DEVICE T settled(T r) {
  return r == r ? r : quiet_nan<T>();
}

// a + b, a - b or a * b (`op`): wrapping for integers; on bool, + is "or" and * is "and" (what 0/1
// arithmetic saturates to); a NaN result is settled().
template <class T>
TESSERA_SDK_HOST_DEVICE T arithmetic(T a, T b, char op) {
  if constexpr (std::is_same_v<T, bool>)
    return op == '*' ? (a && b) : (a || b);
  else if constexpr (std::is_integral_v<T>)
    return wrapped(a, b, op);
  else
    return settled(op == '+' ? a + b : op == '-' ? a - b : a * b);
}

}  // namespace tessera::sdk::hd
