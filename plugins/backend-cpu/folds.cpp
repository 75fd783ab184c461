// The fold kernels (sdk/cpp/fold_ops.hpp): a chain of one binary op, row after row, into an
// accumulator. The collective evaluator computes a ring's chains of reductions with one call each.
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/fold_ops.hpp"
#include "vector_clones.hpp"

namespace tessera::cpu {
namespace {

// Contiguous rows into the accumulator, cloned per vector width (vector_clones.hpp). The sides stay
// as the call says, since maximum and minimum are not symmetric in which of two equal (or NaN)
// operands they return.
template <class Op, class T>
TESSERA_CPU_VECTOR_CLONES void fold_contiguous_rows(T* z, const T* y, int64_t rows, int64_t width,
                                                    int64_t row_stride, bool acc_right) {
  for (int64_t i = 0; i < rows; ++i) {
    const T* row = y + i * row_stride;
    if (acc_right)
      for (int64_t j = 0; j < width; ++j) z[j] = Op::apply(row[j], z[j]);
    else
      for (int64_t j = 0; j < width; ++j) z[j] = Op::apply(z[j], row[j]);
  }
}

template <class Fold, class T>
struct FoldKernel {
  using Op = typename Fold::Op;

  static void run(sdk::KernelArgs& args) {
    const sdk::FoldShape shape = sdk::checked_fold(args, Fold::name, sdk::dtype_of<T>(), expect_arity);
    const DLTensor& acc = args.input(0);
    const DLTensor& rows = args.input(1);
    T* z = sdk::data_of<T>(args.output(0));
    const T* a = sdk::data_of<const T>(acc);
    const int64_t m = shape.width;
    // The accumulator may be the output itself (the evaluator folds in place).
    if (z != a)
      for (int64_t j = 0; j < m; ++j) z[j] = a[j * acc.strides[0]];
    const T* y = sdk::data_of<const T>(rows);
    const int64_t row_stride = rows.strides[0], column_stride = rows.strides[1];
    if (column_stride == 1) return fold_contiguous_rows<Op>(z, y, shape.rows, m, row_stride, shape.acc_right);
    for (int64_t i = 0; i < shape.rows; ++i) {
      const T* row = y + i * row_stride;
      for (int64_t j = 0; j < m; ++j) {
        const T x = row[j * column_stride];
        z[j] = shape.acc_right ? Op::apply(x, z[j]) : Op::apply(z[j], x);
      }
    }
  }
};

// bfloat16 and float16: each step in float32, its result rounded once (add_half_precision_fold_kernels).
template <class Fold, class T>
struct HalfPrecisionFoldKernel {
  using Op = typename Fold::Op;

  static void run(sdk::KernelArgs& args) {
    const sdk::FoldShape shape = sdk::checked_fold(args, Fold::name, sdk::dtype_of<T>(), expect_arity);
    const DLTensor& acc = args.input(0);
    const DLTensor& rows = args.input(1);
    T* z = sdk::data_of<T>(args.output(0));
    const T* a = sdk::data_of<const T>(acc);
    const T* y = sdk::data_of<const T>(rows);
    for (int64_t j = 0; j < shape.width; ++j) {
      float value = sdk::to_float(a[j * acc.strides[0]]);
      for (int64_t i = 0; i < shape.rows; ++i) {
        const float x = sdk::to_float(y[i * rows.strides[0] + j * rows.strides[1]]);
        value =
            sdk::to_float(sdk::from_float<T>(shape.acc_right ? Op::apply(x, value) : Op::apply(value, x)));
      }
      z[j] = sdk::from_float<T>(value);
    }
  }
};

}  // namespace

void register_fold_kernels(sdk::BackendBuilder& b) {
  sdk::add_fold_kernels<FoldKernel>(b);
  sdk::add_half_precision_fold_kernels<HalfPrecisionFoldKernel>(b);
}

}  // namespace tessera::cpu
