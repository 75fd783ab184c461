// Element-wise a (op) b -> out on the GPU: the SDK's ops (sdk/cpp/binary_ops.hpp, shared with the
// CPU backend), and integer pow, which reports a negative exponent from the device.
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
#include "tessera/sdk/cpp/binary_ops.hpp"

namespace tessera::cuda {
namespace {

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

template <class Op, class T>
struct Binary {
  static void run(sdk::KernelArgs& args) {
    using R = typename Op::template Out<T>;
    sdk::expect_binary<T, R>(args, Op::name, expect_arity);
    const StridedView out = make_view(args.output(0), Op::name, "output");
    launch_elements(Op::name, &binary_elements<Op, T, R>, numel_of(out),
                    make_view(args.input(0), Op::name, "input 0"),
                    make_view(args.input(1), Op::name, "input 1"), out);
  }
};

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
  sdk::expect_binary<T, T>(args, "pow", expect_arity);
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
  check(
      cudaMemcpyAsync(&exponent,
                      reinterpret_cast<const T*>(b.data) + offset_of(b, static_cast<int64_t>(first_negative)),
                      sizeof(T), cudaMemcpyDeviceToHost, cudaStreamPerThread),
      "pow");
  synchronize("pow");
  fail(std::string("pow: exponent ") + std::to_string(exponent) + " is negative, expected >= 0 for " +
       dtype_name(sdk::dtype_of<T>()) + " operands");
}

}  // namespace

void register_binary_kernels(sdk::BackendBuilder& b) {
  sdk::add_binary_kernels<Binary>(b);
  b.kernel<&integer_pow_kernel<int32_t>>("pow", sdk::kInt32);
  b.kernel<&integer_pow_kernel<int64_t>>("pow", sdk::kInt64);
}

}  // namespace tessera::cuda
