// Element-wise a (op) b -> out on the GPU: arithmetic, maximum/minimum, bitwise, pow, comparisons.
// Semantics follow the CPU backend op for op (tools/conformance compares the two).
//
// One thread per element (grid-stride), each reading a[i] and b[i] before writing out[i], so the
// exact aliasing the collective executor uses (out is the same view as a) needs no special case.
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"

namespace tessera::cuda {
namespace {

// Signed overflow is undefined in C++ (device code too), so integer arithmetic goes through the
// unsigned type, whose overflow wraps: the two's-complement result PyTorch and the CPU backend give.
template <class T>
__device__ T wrapped(T a, T b, char op) {
  using U = std::make_unsigned_t<T>;
  const U x = static_cast<U>(a), y = static_cast<U>(b);
  return static_cast<T>(op == '+' ? U(x + y) : op == '-' ? U(x - y) : U(x * y));
}

template <class T>
__device__ bool nan_value(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return isnan(x);
  else
    return false;
}

// `compares` says whether the result is bool whatever T is.
// On bool, add and maximum are "or", mul and minimum are "and" (what 0/1 arithmetic saturates to).
struct Add {
  static constexpr const char* name = "add";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else if constexpr (std::is_integral_v<T>)
      return wrapped(a, b, '+');
    else
      return a + b;
  }
};

struct Sub {
  static constexpr const char* name = "sub";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return wrapped(a, b, '-');
    else
      return a - b;
  }
};

struct Mul {
  static constexpr const char* name = "mul";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else if constexpr (std::is_integral_v<T>)
      return wrapped(a, b, '*');
    else
      return a * b;
  }
};

struct Div {
  static constexpr const char* name = "div";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    return a / b;  // IEEE division: nvcc's default -prec-div=true rounds correctly
  }
};

// A NaN operand wins, as in PyTorch and the CPU backend (fmax/fmin would drop it instead).
struct Maximum {
  static constexpr const char* name = "maximum";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    if (nan_value(a)) return a;
    if (nan_value(b)) return b;
    return a < b ? b : a;
  }
};

struct Minimum {
  static constexpr const char* name = "minimum";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    if (nan_value(a)) return a;
    if (nan_value(b)) return b;
    return b < a ? b : a;
  }
};

struct BitwiseAnd {
  static constexpr const char* name = "bitwise_and";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    return static_cast<T>(a & b);
  }
};

struct BitwiseOr {
  static constexpr const char* name = "bitwise_or";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    return static_cast<T>(a | b);
  }
};

struct BitwiseXor {
  static constexpr const char* name = "bitwise_xor";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};

// Floating pow only; integer pow has its own kernel (it must report negative exponents).
struct Pow {
  static constexpr const char* name = "pow";
  static constexpr bool compares = false;
  template <class T>
  __device__ static T apply(T base, T exponent) {
    return pow(base, exponent);
  }
};

#define TESSERA_CUDA_COMPARISON(Name, text, expr)  \
  struct Name {                                    \
    static constexpr const char* name = text;      \
    static constexpr bool compares = true;         \
    template <class T>                             \
    __device__ static bool apply(T a, T b) {       \
      return expr;                                 \
    }                                              \
  };
TESSERA_CUDA_COMPARISON(Eq, "eq", a == b)
TESSERA_CUDA_COMPARISON(Ne, "ne", a != b)
TESSERA_CUDA_COMPARISON(Lt, "lt", a < b)
TESSERA_CUDA_COMPARISON(Le, "le", a <= b)
TESSERA_CUDA_COMPARISON(Gt, "gt", a > b)
TESSERA_CUDA_COMPARISON(Ge, "ge", a >= b)
#undef TESSERA_CUDA_COMPARISON

template <class Op, class T, class R>
__global__ void binary_elements(int64_t n, StridedView a, StridedView b, StridedView out) {
  const T* x = reinterpret_cast<const T*>(a.data);
  const T* y = reinterpret_cast<const T*>(b.data);
  R* z = reinterpret_cast<R*>(out.data);
  for (int64_t i = grid_first(); i < n; i += grid_step())
    z[offset_of(out, i)] = Op::template apply<T>(x[offset_of(a, i)], y[offset_of(b, i)]);
}

// Integer pow by repeated squaring in the unsigned type (overflow wraps, as on the CPU). A negative
// exponent is an error; the CPU backend reports the first one in row-major order, so each thread
// that meets one lowers `first_negative` to its index and the host reads that exponent back.
template <class T>
__global__ void integer_pow_elements(int64_t n, StridedView a, StridedView b, StridedView out,
                                     unsigned long long* first_negative) {
  using U = std::make_unsigned_t<T>;
  const T* x = reinterpret_cast<const T*>(a.data);
  const T* y = reinterpret_cast<const T*>(b.data);
  T* z = reinterpret_cast<T*>(out.data);
  for (int64_t i = grid_first(); i < n; i += grid_step()) {
    const T base = x[offset_of(a, i)];
    T exponent = y[offset_of(b, i)];
    if (exponent < 0) {
      atomicMin(first_negative, static_cast<unsigned long long>(i));
      continue;
    }
    U result = 1;
    U square = static_cast<U>(base);
    for (; exponent != 0; exponent >>= 1) {
      if (exponent & 1) result *= square;
      square *= square;
    }
    z[offset_of(out, i)] = static_cast<T>(result);
  }
}

// The checks every binary kernel makes, as in the CPU backend: two inputs of dtype T, one output of
// dtype R, all three of one shape (the core broadcasts with stride 0 before calling).
template <class T, class R>
void check_binary(const sdk::KernelArgs& args, const char* op) {
  expect_arity(args, op, 2, 1);
  expect_dtype(op, "input 0", args.input(0), sdk::dtype_of<T>());
  expect_dtype(op, "input 1", args.input(1), sdk::dtype_of<T>());
  expect_dtype(op, "output", args.output(0), sdk::dtype_of<R>());
  expect_shape(op, "input 1", args.input(1), args.input(0), "input 0");
  expect_shape(op, "output", args.output(0), args.input(0), "input 0");
}

template <class Op, class T>
void binary_kernel(sdk::KernelArgs& args) {
  using R = std::conditional_t<Op::compares, bool, T>;
  check_binary<T, R>(args, Op::name);
  const StridedView out = make_view(args.output(0), Op::name, "output");
  launch_elements(Op::name, &binary_elements<Op, T, R>, numel_of(out), make_view(args.input(0), Op::name, "input 0"),
                  make_view(args.input(1), Op::name, "input 1"), out);
}

// One stream-ordered device word for the kernel to report through, freed on every path out.
struct DeviceIndexFlag {
  unsigned long long* device = nullptr;
  explicit DeviceIndexFlag(const char* op) {
    check(cudaMallocAsync(reinterpret_cast<void**>(&device), sizeof(*device), cudaStreamPerThread), op);
    // All bytes 0xFF: ULLONG_MAX, "no negative exponent seen", which any index is below.
    check(cudaMemsetAsync(device, 0xFF, sizeof(*device), cudaStreamPerThread), op);
  }
  DeviceIndexFlag(const DeviceIndexFlag&) = delete;
  DeviceIndexFlag& operator=(const DeviceIndexFlag&) = delete;
  ~DeviceIndexFlag() { cudaFreeAsync(device, cudaStreamPerThread); }  // a destructor must not throw
};

template <class T>
void integer_pow_kernel(sdk::KernelArgs& args) {
  check_binary<T, T>(args, "pow");
  const StridedView a = make_view(args.input(0), "pow", "input 0");
  const StridedView b = make_view(args.input(1), "pow", "input 1");
  const StridedView out = make_view(args.output(0), "pow", "output");
  const int64_t n = numel_of(out);
  if (n == 0) return;
  DeviceIndexFlag flag("pow");
  launch_elements("pow", &integer_pow_elements<T>, n, a, b, out, flag.device);
  unsigned long long first_negative = ULLONG_MAX;
  check(cudaMemcpyAsync(&first_negative, flag.device, sizeof(first_negative), cudaMemcpyDeviceToHost,
                        cudaStreamPerThread),
        "pow");
  synchronize("pow");
  if (first_negative == ULLONG_MAX) return;
  T exponent = 0;
  check(cudaMemcpyAsync(&exponent, reinterpret_cast<const T*>(b.data) + offset_of(b, static_cast<int64_t>(first_negative)),
                        sizeof(T), cudaMemcpyDeviceToHost, cudaStreamPerThread),
        "pow");
  synchronize("pow");
  fail(std::string("pow: exponent ") + std::to_string(exponent) + " is negative, expected >= 0 for " +
       dtype_name(sdk::dtype_of<T>()) + " operands");
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
  add_kernels<Pow, float, double>(b);
  b.kernel<&integer_pow_kernel<int32_t>>("pow", sdk::kInt32);
  b.kernel<&integer_pow_kernel<int64_t>>("pow", sdk::kInt64);
  add_kernels<Eq, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Ne, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Lt, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Le, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Gt, float, double, int32_t, int64_t, bool>(b);
  add_kernels<Ge, float, double, int32_t, int64_t, bool>(b);
}

}  // namespace tessera::cuda
