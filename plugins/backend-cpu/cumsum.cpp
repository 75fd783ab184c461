// cumsum over the last dim: each row's running sum, left to right in the tensor's own dtype
// (int64 wraps through the unsigned type, as PyTorch's sums do). The core sums integer inputs as
// int64, so that is the only integer dtype.
#include <array>
#include <cstdint>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "views.hpp"

namespace tessera::cpu {
namespace {

template <class T>
T plus(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <class T>
void cumsum_kernel(sdk::KernelArgs& args) {
  sdk::expect_unary(args, "cumsum", sdk::dtype_of<T>(), expect_arity);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  const T* x = sdk::data_of<const T>(a);
  T* y = sdk::data_of<T>(out);
  if (a.ndim == 0) {
    y[0] = x[0];
    return;
  }
  const int last = a.ndim - 1;
  const int64_t length = a.shape[last];
  const int64_t xs = a.strides[last];
  const int64_t ys = out.strides[last];
  const DLTensor a_rows = leading_dims(a, last);
  const DLTensor out_rows = leading_dims(out, last);
  sdk::for_each_offset<2>(a_rows.ndim, a_rows.shape, {&a_rows, &out_rows},
                          [&](const std::array<int64_t, 2>& o) {
                            T running = T(0);
                            for (int64_t j = 0; j < length; ++j) {
                              running = plus(running, x[o[0] + j * xs]);
                              y[o[1] + j * ys] = running;
                            }
                          });
}

}  // namespace

void register_cumsum_kernels(sdk::BackendBuilder& b) {
  b.kernel<&cumsum_kernel<float>>("cumsum", sdk::kFloat32);
  b.kernel<&cumsum_kernel<double>>("cumsum", sdk::kFloat64);
  b.kernel<&cumsum_kernel<int64_t>>("cumsum", sdk::kInt64);
}

}  // namespace tessera::cpu
