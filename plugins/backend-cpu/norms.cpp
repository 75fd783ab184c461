// layer_norm, rms_norm and their backward kernels (sdk/cpp/norms.hpp: the rules, the rows and
// the fixed summation order, shared with the CUDA backend). Rows whose elements are contiguous run
// through loops carrying the vector clones; the order of every sum is the SDK's lane order, so each
// clone, and the strided path, gives the same bits. Forward rows are shared out over threads (each
// row is computed alone, whichever thread takes it); the backward kernels sum the weight's and the
// bias's gradients over the rows in row order, on the calling thread.
#include "tessera/sdk/cpp/norms.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "checks.hpp"
#include "kernels.hpp"
#include "parallel_tasks.hpp"
#include "vector_clones.hpp"

namespace tessera::cpu {
namespace {

// One row of a 2-d tensor, or a 1-d tensor, with any element stride.
template <class T>
struct Strided {
  T* first;
  int64_t stride;
  T& operator[](int64_t j) const { return first[j * stride]; }
};

template <class T>
Strided<T> row_of(const DLTensor& t, int64_t r) {
  return {sdk::data_of<T>(t) + r * t.strides[0], t.strides[1]};
}
template <class T>
Strided<T> vector_of(const DLTensor& t) {
  return {sdk::data_of<T>(t), t.ndim == 1 ? t.strides[0] : 1};
}

bool dense_rows(const DLTensor& t) { return t.shape[1] <= 1 || t.strides[1] == 1; }
bool dense_vector(const DLTensor& t) { return t.shape[0] <= 1 || t.strides[0] == 1; }

// Calls f.template operator()<kWeight, kBias>() for the call's flags.
template <class F>
void with_flags(bool weight, bool bias, const F& f) {
  if (weight && bias) return f.template operator()<true, true>();
  if (weight) return f.template operator()<true, false>();
  if (bias) return f.template operator()<false, true>();
  f.template operator()<false, false>();
}

// Forward rows [first, last) of contiguous rows and parameters.
template <class T, bool kLayer, bool kWeight, bool kBias, class C = sdk::NormCompute<T>>
TESSERA_CPU_VECTOR_CLONES void forward_dense_rows(const T* x, int64_t x_rows, T* y, int64_t y_rows,
                                                  const C* w, const C* b, C* mean, C* rstd, int64_t first,
                                                  int64_t last, int64_t n, C eps) {
  for (int64_t r = first; r < last; ++r) {
    if constexpr (kLayer)
      sdk::layer_norm_row<T, kWeight, kBias>(x + r * x_rows, y + r * y_rows, w, b, n, eps, mean[r], rstd[r]);
    else
      sdk::rms_norm_row<T, kWeight>(x + r * x_rows, y + r * y_rows, w, n, eps, rstd[r]);
  }
}

// The same rows through strided views (any layout; the same order, so the same bits).
template <class T, bool kLayer, bool kWeight, bool kBias, class C = sdk::NormCompute<T>>
void forward_strided_rows(const DLTensor& x, const DLTensor& y, const Strided<const C>& w,
                          const Strided<const C>& b, C* mean, C* rstd, int64_t first, int64_t last, int64_t n,
                          C eps) {
  for (int64_t r = first; r < last; ++r) {
    if constexpr (kLayer)
      sdk::layer_norm_row<T, kWeight, kBias>(row_of<const T>(x, r), row_of<T>(y, r), w, b, n, eps, mean[r],
                                             rstd[r]);
    else
      sdk::rms_norm_row<T, kWeight>(row_of<const T>(x, r), row_of<T>(y, r), w, n, eps, rstd[r]);
  }
}

// Rows per task: enough elements that a task outweighs handing it to a thread.
constexpr int64_t kElementsPerTask = int64_t{1} << 16;

template <class T, bool kLayer>
void forward_kernel(sdk::KernelArgs& args) {
  using C = sdk::NormCompute<T>;
  const char* op = kLayer ? "layer_norm" : "rms_norm";
  const sdk::NormCall call =
      sdk::checked_norm(args, op, sdk::dtype_of<T>(), sdk::dtype_of<C>(), expect_arity);
  const DLTensor& x = args.input(0);
  const DLTensor& y = args.output(0);
  const DLTensor* w = call.has_weight ? &args.input(1) : nullptr;
  const DLTensor* b = call.has_bias ? &args.input(call.has_weight ? 2 : 1) : nullptr;
  C* mean = kLayer ? sdk::data_of<C>(args.output(1)) : nullptr;
  C* rstd = sdk::data_of<C>(args.output(kLayer ? 2 : 1));
  const auto eps = static_cast<C>(sdk::float_attr(args, op, "eps"));
  const int64_t n = call.length;
  const bool dense = dense_rows(x) && dense_rows(y) && (w == nullptr || dense_vector(*w)) &&
                     (b == nullptr || dense_vector(*b));
  const int64_t rows_per_task = std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(n, 1));
  const int64_t tasks = (call.rows + rows_per_task - 1) / rows_per_task;
  const int threads = static_cast<int>(std::min<int64_t>(product_threads(), tasks));
  with_flags(call.has_weight, call.has_bias, [&]<bool kWeight, bool kBias>() {
    run_tasks(tasks, threads, [&](int64_t task) {
      const int64_t first = task * rows_per_task, last = std::min(call.rows, first + rows_per_task);
      if (dense)
        forward_dense_rows<T, kLayer, kWeight, kBias>(
            sdk::data_of<const T>(x), x.strides[0], sdk::data_of<T>(y), y.strides[0],
            w ? sdk::data_of<const C>(*w) : nullptr, b ? sdk::data_of<const C>(*b) : nullptr, mean, rstd,
            first, last, n, eps);
      else
        forward_strided_rows<T, kLayer, kWeight, kBias>(x, y, w ? vector_of<const C>(*w) : Strided<const C>{},
                                                        b ? vector_of<const C>(*b) : Strided<const C>{}, mean,
                                                        rstd, first, last, n, eps);
    });
  });
}

// One backward row and its terms of the weight's and bias's gradients, added to gw and gb (the
// rows' running sums, in row order).
template <class T, bool kLayer, bool kWeight, bool kBias, class G, class X, class GX, class W,
          class C = sdk::NormCompute<T>>
inline void backward_row(const G& g, const X& x, const GX& gx, const W& w, C* gw, C* gb, int64_t n, C mean,
                         C rstd) {
  sdk::norm_backward_row<T, kLayer, kWeight>(g, x, gx, w, n, mean, rstd);
  if constexpr (kWeight)
    for (int64_t j = 0; j < n; ++j)
      gw[j] += sdk::norm_load<T>(g[j]) * ((sdk::norm_load<T>(x[j]) - mean) * rstd);
  if constexpr (kBias)
    for (int64_t j = 0; j < n; ++j) gb[j] += sdk::norm_load<T>(g[j]);
}

template <class T, bool kLayer, bool kWeight, bool kBias, class C = sdk::NormCompute<T>>
TESSERA_CPU_VECTOR_CLONES void backward_dense_rows(const T* g, int64_t g_rows, const T* x, int64_t x_rows,
                                                   T* gx, int64_t gx_rows, const C* w, const C* mean,
                                                   const C* rstd, C* gw, C* gb, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    backward_row<T, kLayer, kWeight, kBias>(g + r * g_rows, x + r * x_rows, gx + r * gx_rows, w, gw, gb, n,
                                            kLayer ? mean[r] : C(0), rstd[r]);
}

template <class T, bool kLayer>
void backward_kernel(sdk::KernelArgs& args) {
  using C = sdk::NormCompute<T>;
  const char* op = kLayer ? "layer_norm_backward" : "rms_norm_backward";
  const sdk::NormCall call =
      sdk::checked_norm(args, op, sdk::dtype_of<T>(), sdk::dtype_of<C>(), expect_arity);
  const DLTensor& g = args.input(0);
  const DLTensor& x = args.input(1);
  const DLTensor& rstd_t = args.input(kLayer ? 3 : 2);
  const DLTensor* w = call.has_weight ? &args.input(kLayer ? 4 : 3) : nullptr;
  const DLTensor& gx = args.output(0);
  C* gw = call.has_weight ? sdk::data_of<C>(args.output(1)) : nullptr;
  C* gb = call.has_bias ? sdk::data_of<C>(args.output(call.has_weight ? 2 : 1)) : nullptr;
  const int64_t n = call.length;
  if (gw) std::fill(gw, gw + n, C(0));
  if (gb) std::fill(gb, gb + n, C(0));
  // mean and rstd may be strided views; the rows read them once each.
  std::vector<C> mean_rows(kLayer ? static_cast<size_t>(call.rows) : 0),
      rstd_rows(static_cast<size_t>(call.rows));
  for (int64_t r = 0; r < call.rows; ++r) {
    if constexpr (kLayer) mean_rows[static_cast<size_t>(r)] = vector_of<const C>(args.input(2))[r];
    rstd_rows[static_cast<size_t>(r)] = vector_of<const C>(rstd_t)[r];
  }
  const bool dense = dense_rows(g) && dense_rows(x) && dense_rows(gx) && (w == nullptr || dense_vector(*w));
  with_flags(call.has_weight, call.has_bias, [&]<bool kWeight, bool kBias>() {
    if (dense) {
      backward_dense_rows<T, kLayer, kWeight, kBias>(
          sdk::data_of<const T>(g), g.strides[0], sdk::data_of<const T>(x), x.strides[0], sdk::data_of<T>(gx),
          gx.strides[0], w ? sdk::data_of<const C>(*w) : nullptr, mean_rows.data(), rstd_rows.data(), gw, gb,
          call.rows, n);
      return;
    }
    const Strided<const C> weight = w ? vector_of<const C>(*w) : Strided<const C>{};
    for (int64_t r = 0; r < call.rows; ++r)
      backward_row<T, kLayer, kWeight, kBias>(
          row_of<const T>(g, r), row_of<const T>(x, r), row_of<T>(gx, r), weight, gw, gb, n,
          kLayer ? mean_rows[static_cast<size_t>(r)] : C(0), rstd_rows[static_cast<size_t>(r)]);
  });
}

// The catalogue's four ops through one kernel template (sdk::add_norm_kernels).
template <class Op, class T>
struct NormKernel {
  static void run(sdk::KernelArgs& args) {
    if constexpr (Op::backward)
      backward_kernel<T, Op::layer>(args);
    else
      forward_kernel<T, Op::layer>(args);
  }
};

}  // namespace

void register_norm_kernels(sdk::BackendBuilder& b) { sdk::add_norm_kernels<NormKernel>(b); }

}  // namespace tessera::cpu
