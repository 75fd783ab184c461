// TESSERA_SDK_HOST_DEVICE marks SDK helpers that a backend may call from host code and, compiled by
// nvcc, from device code too (the folds of reductions.hpp, the rows of softmax.hpp, the ops of
// unary_ops.hpp). Elsewhere it is empty. sdk::hd holds the math functions they use: the host libm's
// on the host, CUDA's on a device (within an ulp or two of each other, not bit-identical).
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define TESSERA_SDK_HOST_DEVICE __host__ __device__
#else
#define TESSERA_SDK_HOST_DEVICE
#endif

namespace tessera::sdk::hd {

#if defined(__CUDA_ARCH__)
#define TESSERA_SDK_HD_MATH(name) \
  template <class T>              \
  TESSERA_SDK_HOST_DEVICE T name(T x) { return ::name(x); }
#else
#define TESSERA_SDK_HD_MATH(name) \
  template <class T>              \
  TESSERA_SDK_HOST_DEVICE T name(T x) { return std::name(x); }
#endif
TESSERA_SDK_HD_MATH(exp)
TESSERA_SDK_HD_MATH(log)
TESSERA_SDK_HD_MATH(sqrt)
TESSERA_SDK_HD_MATH(tanh)
TESSERA_SDK_HD_MATH(erf)
TESSERA_SDK_HD_MATH(fabs)
#undef TESSERA_SDK_HD_MATH

template <class T>
TESSERA_SDK_HOST_DEVICE T pow(T base, T exponent) {
#if defined(__CUDA_ARCH__)
  return ::pow(base, exponent);
#else
  return std::pow(base, exponent);
#endif
}

}  // namespace tessera::sdk::hd
