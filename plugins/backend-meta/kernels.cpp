// Every kernel of the catalogue, for exactly the dtypes the catalogue lists (so an op on a dtype no
// backend supports fails here as it does on cpu). The host has done all shape work before a kernel
// is called; a kernel here only rejects what a computing kernel would reject from shapes alone,
// which is a reduction without identity over an empty range.
#include "kernels.hpp"

#include <initializer_list>
#include <string>

namespace tessera::meta {
namespace {

void nothing(sdk::KernelArgs&) {}

std::string shape_text(const DLTensor& t, int from, int to) {
  std::string text = "[";
  for (int d = from; d < to; ++d) text += (d > from ? ", " : "") + std::to_string(t.shape[d]);
  return text + "]";
}

// max, min, argmax, argmin: the reduced (trailing `reduce_ndim`) dims must hold an element.
template <const char* Op>
void nonempty_reduction(sdk::KernelArgs& args) {
  const DLTensor& a = args.input(0);
  const int64_t reduce_ndim = args.int_attr("reduce_ndim");
  if (reduce_ndim < 0 || reduce_ndim > a.ndim)
    throw sdk::Error(TESSERA_INVALID_ARGUMENT, std::string(Op) + ": attribute 'reduce_ndim' is " +
                                                   std::to_string(reduce_ndim) + ", expected 0.." +
                                                   std::to_string(a.ndim) + " (the ndim of input 0, shape " +
                                                   shape_text(a, 0, a.ndim) + ")");
  const int first = a.ndim - static_cast<int>(reduce_ndim);
  for (int d = first; d < a.ndim; ++d)
    if (a.shape[d] == 0)
      throw sdk::Error(TESSERA_INVALID_ARGUMENT,
                       std::string(Op) + ": the reduced dims " + shape_text(a, first, a.ndim) +
                           " of input 0 (shape " + shape_text(a, 0, a.ndim) +
                           ") are empty, expected at least one element: " + Op + " has no identity");
}

constexpr char kMax[] = "max";
constexpr char kMin[] = "min";
constexpr char kArgmax[] = "argmax";
constexpr char kArgmin[] = "argmin";

using DTypes = std::initializer_list<DLDataType>;
const DTypes kAll = {sdk::kFloat32, sdk::kFloat64, sdk::kInt32, sdk::kInt64, sdk::kBool};
const DTypes kNum = {sdk::kFloat32, sdk::kFloat64, sdk::kInt32, sdk::kInt64};
const DTypes kFloat = {sdk::kFloat32, sdk::kFloat64};
const DTypes kBits = {sdk::kInt32, sdk::kInt64, sdk::kBool};
const DTypes kBoolOnly = {sdk::kBool};

template <sdk::KernelFunction Fn = &nothing>
void add(sdk::BackendBuilder& b, std::initializer_list<const char*> ops, DTypes dtypes) {
  for (const char* op : ops)
    for (DLDataType dtype : dtypes) b.kernel<Fn>(op, dtype);
}

}  // namespace

void register_kernels(sdk::BackendBuilder& b) {
  // Element-wise.
  add(b, {"add", "mul", "maximum", "minimum"}, kAll);
  add(b, {"sub", "pow"}, kNum);
  add(b, {"div"}, kFloat);
  add(b, {"bitwise_and", "bitwise_or", "bitwise_xor"}, kBits);
  add(b, {"eq", "ne", "lt", "le", "gt", "ge"}, kAll);
  add(b, {"neg", "abs", "relu"}, kNum);
  add(b, {"exp", "log", "sqrt", "tanh", "sigmoid", "gelu", "gelu_grad"}, kFloat);
  add(b, {"copy", "cast"}, kAll);
  // The dtypes of SDK 1.6: other ops on them run as float32 (int64) through the core's widening.
  add(b, {"copy", "cast"}, {sdk::kBFloat16, sdk::kFloat16, sdk::kInt8, sdk::kUInt8});
  // Folds (SDK 1.4).
  add(b, {"fold_add", "fold_mul", "fold_maximum", "fold_minimum"}, kAll);
  add(b, {"fold_bitwise_and", "fold_bitwise_or", "fold_bitwise_xor"}, kBits);
  add(b, {"fold_add", "fold_mul", "fold_maximum", "fold_minimum"},
      {sdk::kBFloat16, sdk::kFloat16});  // SDK 1.6
  // Creation.
  add(b, {"fill", "eye"}, kAll);
  add(b, {"fill"}, {sdk::kInt8, sdk::kUInt8});  // SDK 1.6, as the cpu backend's
  add(b, {"arange"}, kNum);
  add(b, {"uniform", "normal"}, kFloat);
  // Reductions.
  add(b, {"sum", "prod"}, kAll);
  add(b, {"mean"}, kFloat);
  add<&nonempty_reduction<kMax>>(b, {"max"}, kAll);
  add<&nonempty_reduction<kMin>>(b, {"min"}, kAll);
  add<&nonempty_reduction<kArgmax>>(b, {"argmax"}, kNum);
  add<&nonempty_reduction<kArgmin>>(b, {"argmin"}, kNum);
  add(b, {"all", "any"}, kBoolOnly);
  // Linear algebra and softmax.
  add(b, {"mm", "bmm"}, kNum);
  add(b, {"softmax", "log_softmax"}, kFloat);
  // SDK 1.6.
  add(b, {"sin", "cos"}, kFloat);
  add(b, {"where"}, kAll);
  add(b, {"cumsum"}, {sdk::kFloat32, sdk::kFloat64, sdk::kInt64});
  // Indexing: index values are data, which a shapes-only backend does not hold.
  add(b, {"gather"}, kAll);
  add(b, {"scatter_add"}, kNum);
  // SDK 1.7: the host has shaped every output (out, the per-row statistics, the gradients).
  add(b, {"layer_norm", "rms_norm", "layer_norm_backward", "rms_norm_backward"},
      {sdk::kFloat32, sdk::kFloat64, sdk::kBFloat16, sdk::kFloat16});
}

}  // namespace tessera::meta
