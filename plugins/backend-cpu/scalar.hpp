// Scalar arithmetic shared by the kernels.
//
// Signed integer overflow is undefined behaviour in C++, and tensors overflow routinely (sums of
// large int32 data, hashes). Integer arithmetic therefore goes through the unsigned type, whose
// overflow wraps, and converts back (modular since C++20): the result is the two's-complement
// wraparound PyTorch produces. Floats and bool use the plain operators.
#pragma once

#include <cmath>
#include <type_traits>

namespace tessera::cpu {

template <class T>
inline constexpr bool is_signed_int = std::is_integral_v<T>&& std::is_signed_v<T>;

template <class T>
T wrap_add(T a, T b) {
  if constexpr (is_signed_int<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <class T>
T wrap_sub(T a, T b) {
  if constexpr (is_signed_int<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}

template <class T>
T wrap_mul(T a, T b) {
  if constexpr (is_signed_int<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <class T>
T wrap_neg(T a) {
  return wrap_sub(T(0), a);
}

template <class T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

}  // namespace tessera::cpu
