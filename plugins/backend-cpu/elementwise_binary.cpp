// Element-wise a (op) b -> out: the SDK's ops (sdk/cpp/binary_ops.hpp, shared with the CUDA backend)
// over strided tensors, and integer pow.
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/binary_ops.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "vector_clones.hpp"

namespace tessera::cpu {
namespace {

// Integer pow by repeated squaring in the unsigned type, so overflow wraps instead of being UB; a
// negative exponent is an error (the first one in row-major order: the loop stops there).
struct IntegerPow {
  static constexpr const char* name = "pow";
  template <class T>
  using Out = T;
  template <class T>
  static T apply(T base, T exponent) {
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
};

// The contiguous loops, out of line so that each is cloned per vector width (vector_clones.hpp).
// In place (z is x, as the collective executor reduces) gets its own loop: with z == x the general
// one would fail the vectoriser's overlap check.
template <class Op, class T, class R>
TESSERA_CPU_VECTOR_CLONES void apply_flat(R* z, const T* x, const T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) z[i] = Op::apply(x[i], y[i]);
}
template <class Op, class T>
TESSERA_CPU_VECTOR_CLONES void apply_in_place(T* z, const T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) z[i] = Op::apply(z[i], y[i]);
}
template <class Op, class T, class R>
TESSERA_CPU_VECTOR_CLONES void apply_scalar_right(R* z, const T* x, T y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) z[i] = Op::apply(x[i], y);
}
template <class Op, class T, class R>
TESSERA_CPU_VECTOR_CLONES void apply_scalar_left(R* z, T x, const T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) z[i] = Op::apply(x, y[i]);
}

template <class Op, class T>
struct Binary {
  static void run(sdk::KernelArgs& args) {
    using R = typename Op::template Out<T>;
    sdk::expect_binary<T, R>(args, Op::name, expect_arity);
    const DLTensor& a = args.input(0);
    const DLTensor& b = args.input(1);
    const DLTensor& out = args.output(0);
    const T* x = sdk::data_of<const T>(a);
    const T* y = sdk::data_of<const T>(b);
    R* z = sdk::data_of<R>(out);
    if (sdk::is_contiguous(a) && sdk::is_contiguous(b) && sdk::is_contiguous(out)) {
      const int64_t n = sdk::numel(out);
      if constexpr (std::is_same_v<R, T>) {
        if (static_cast<const void*>(z) == static_cast<const void*>(x) && x != y)
          return apply_in_place<Op>(z, y, n);
      }
      return apply_flat<Op>(z, x, y, n);
    }
    // Strided or broadcast: row by row, a row with unit steps (a bias row added to every row of a
    // matrix) as the contiguous loop, a broadcast scalar as the scalar loop.
    using Offsets = std::array<int64_t, 3>;
    sdk::for_each_row<3>(out.ndim, out.shape, {&a, &b, &out},
                         [&](const Offsets& o, const Offsets& step, int64_t n) {
                           if (step[2] == 1 && step[0] == 1 && step[1] == 1)
                             return apply_flat<Op>(z + o[2], x + o[0], y + o[1], n);
                           if (step[2] == 1 && step[0] == 1 && step[1] == 0)
                             return apply_scalar_right<Op>(z + o[2], x + o[0], y[o[1]], n);
                           if (step[2] == 1 && step[0] == 0 && step[1] == 1)
                             return apply_scalar_left<Op>(z + o[2], x[o[0]], y + o[1], n);
                           for (int64_t j = 0; j < n; ++j)
                             z[o[2] + j * step[2]] = Op::apply(x[o[0] + j * step[0]], y[o[1] + j * step[1]]);
                         });
  }
};

}  // namespace

void register_binary_kernels(sdk::BackendBuilder& b) {
  sdk::add_binary_kernels<Binary>(b);
  b.kernel<&Binary<IntegerPow, int32_t>::run>("pow", sdk::kInt32);
  b.kernel<&Binary<IntegerPow, int64_t>::run>("pow", sdk::kInt64);
}

}  // namespace tessera::cpu
