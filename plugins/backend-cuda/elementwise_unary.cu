// Element-wise op(a) -> out on the GPU, same dtype and shape. Semantics follow the CPU backend
// op for op; the float functions are CUDA's (within a few ulp of the host's libm, not bit-equal,
// which KERNELS.md does not ask of them).
#include <cstdint>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"

namespace tessera::cuda {
namespace {

// Negation through the unsigned type: -INT_MIN is undefined for signed types and wraps to INT_MIN
// here, as in PyTorch and the CPU backend.
template <class T>
__device__ T negated(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(U(0) - static_cast<U>(x)));
  } else {
    return -x;
  }
}

struct Neg {
  static constexpr const char* name = "neg";
  template <class T>
  __device__ static T apply(T x) {
    return negated(x);
  }
};

// abs(INT_MIN) wraps to INT_MIN.
struct Abs {
  static constexpr const char* name = "abs";
  template <class T>
  __device__ static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>)
      return fabs(x);
    else
      return x < 0 ? negated(x) : x;
  }
};

// Written as "x < 0" so that NaN, failing the comparison, passes through.
struct Relu {
  static constexpr const char* name = "relu";
  template <class T>
  __device__ static T apply(T x) {
    return x < T(0) ? T(0) : x;
  }
};

struct Exp {
  static constexpr const char* name = "exp";
  template <class T>
  __device__ static T apply(T x) {
    return exp(x);
  }
};

struct Log {
  static constexpr const char* name = "log";
  template <class T>
  __device__ static T apply(T x) {
    return log(x);
  }
};

struct Sqrt {
  static constexpr const char* name = "sqrt";
  template <class T>
  __device__ static T apply(T x) {
    return sqrt(x);  // correctly rounded under nvcc's default -prec-sqrt=true
  }
};

struct Tanh {
  static constexpr const char* name = "tanh";
  template <class T>
  __device__ static T apply(T x) {
    return tanh(x);
  }
};

// exp only of non-positive values, so it never overflows to inf/inf.
struct Sigmoid {
  static constexpr const char* name = "sigmoid";
  template <class T>
  __device__ static T apply(T x) {
    if (x >= T(0)) return T(1) / (T(1) + exp(-x));
    const T e = exp(x);
    return e / (T(1) + e);
  }
};

// The exact (erf) form, not the tanh approximation.
struct Gelu {
  static constexpr const char* name = "gelu";
  template <class T>
  __device__ static T apply(T x) {
    const T sqrt2 = static_cast<T>(1.4142135623730951);
    return T(0.5) * x * (T(1) + erf(x / sqrt2));
  }
};

// d gelu(x) / dx = Phi(x) + x phi(x) (standard normal CDF and density): what gelu's backward
// multiplies the incoming gradient by.
struct GeluGrad {
  static constexpr const char* name = "gelu_grad";
  template <class T>
  __device__ static T apply(T x) {
    const T sqrt2 = static_cast<T>(1.4142135623730951);
    const T inv_sqrt_2pi = static_cast<T>(0.3989422804014327);
    return T(0.5) * (T(1) + erf(x / sqrt2)) + x * inv_sqrt_2pi * exp(T(-0.5) * x * x);
  }
};

template <class Op, class T>
__global__ void unary_elements(int64_t n, StridedView a, StridedView out) {
  const T* x = reinterpret_cast<const T*>(a.data);
  T* y = reinterpret_cast<T*>(out.data);
  for (int64_t i = grid_first(); i < n; i += grid_step()) y[offset_of(out, i)] = Op::template apply<T>(x[offset_of(a, i)]);
}

template <class Op, class T>
void unary_kernel(sdk::KernelArgs& args) {
  expect_arity(args, Op::name, 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  expect_dtype(Op::name, "input 0", a, sdk::dtype_of<T>());
  expect_dtype(Op::name, "output", out, sdk::dtype_of<T>());
  expect_shape(Op::name, "output", out, a, "input 0");
  const StridedView out_view = make_view(out, Op::name, "output");
  launch_elements(Op::name, &unary_elements<Op, T>, numel_of(out_view), make_view(a, Op::name, "input 0"), out_view);
}

template <class Op, class... Ts>
void add_kernels(sdk::BackendBuilder& b) {
  (b.kernel<&unary_kernel<Op, Ts>>(Op::name, sdk::dtype_of<Ts>()), ...);
}

}  // namespace

void register_unary_kernels(sdk::BackendBuilder& b) {
  add_kernels<Neg, float, double, int32_t, int64_t>(b);
  add_kernels<Abs, float, double, int32_t, int64_t>(b);
  add_kernels<Relu, float, double, int32_t, int64_t>(b);
  add_kernels<Exp, float, double>(b);
  add_kernels<Log, float, double>(b);
  add_kernels<Sqrt, float, double>(b);
  add_kernels<Tanh, float, double>(b);
  add_kernels<Sigmoid, float, double>(b);
  add_kernels<Gelu, float, double>(b);
  add_kernels<GeluGrad, float, double>(b);
}

}  // namespace tessera::cuda
