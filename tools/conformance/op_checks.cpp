#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

const std::vector<OpCheck>& op_checks() {
  using D = std::vector<ts::DType>;
  // KERNELS.md's notation: "float" = f32 f64, "num" = float + i32 i64, "all five" = num + bool.
  static const D floats = {ts::kFloat32, ts::kFloat64};
  static const D num = {ts::kInt32, ts::kInt64, ts::kFloat32, ts::kFloat64};
  static const D all = {ts::kBool, ts::kInt32, ts::kInt64, ts::kFloat32, ts::kFloat64};
  static const D bits = {ts::kBool, ts::kInt32, ts::kInt64};
  static const std::vector<OpCheck> checks = {
      {"add", all, binary_cases},
      {"sub", num, binary_cases},
      {"mul", all, binary_cases},
      {"maximum", all, binary_cases},
      {"minimum", all, binary_cases},
      {"div", floats, binary_cases},
      {"bitwise_and", bits, bitwise_cases},
      {"bitwise_or", bits, bitwise_cases},
      {"bitwise_xor", bits, bitwise_cases},
      {"pow", num, binary_cases},
      {"eq", all, binary_cases},
      {"ne", all, binary_cases},
      {"lt", all, binary_cases},
      {"le", all, binary_cases},
      {"gt", all, binary_cases},
      {"ge", all, binary_cases},
      {"neg", num, unary_cases},
      {"abs", num, unary_cases},
      {"relu", num, unary_cases},
      {"exp", floats, unary_cases},
      {"log", floats, unary_cases},
      {"sqrt", floats, unary_cases},
      {"tanh", floats, unary_cases},
      {"sigmoid", floats, unary_cases},
      {"gelu", floats, unary_cases},
      {"gelu_grad", floats, gelu_grad_cases},
      {"copy", all, copy_cases},
      {"cast", all, cast_cases},
      {"fold_add", all, fold_cases},
      {"fold_mul", all, fold_cases},
      {"fold_maximum", all, fold_cases},
      {"fold_minimum", all, fold_cases},
      {"fold_bitwise_and", bits, fold_cases},
      {"fold_bitwise_or", bits, fold_cases},
      {"fold_bitwise_xor", bits, fold_cases},
      {"fill", all, creation_cases},
      {"arange", num, creation_cases},
      {"eye", all, creation_cases},
      {"uniform", floats, random_cases},
      {"normal", floats, random_cases},
      {"sum", all, reduction_cases},
      {"prod", all, reduction_cases},
      {"mean", floats, reduction_cases},
      {"max", all, reduction_cases},
      {"min", all, reduction_cases},
      {"argmax", num, reduction_cases},
      {"argmin", num, reduction_cases},
      {"all", {ts::kBool}, reduction_cases},
      {"any", {ts::kBool}, reduction_cases},
      {"mm", num, matmul_cases},
      {"bmm", num, matmul_cases},
      {"softmax", floats, softmax_cases},
      {"log_softmax", floats, softmax_cases},
      // SDK 1.6.
      {"sin", floats, trig_cases},
      {"cos", floats, trig_cases},
      {"where", all, where_cases},
      {"cumsum", {ts::kInt64, ts::kFloat32, ts::kFloat64}, cumsum_cases},
      {"gather", all, indexing_cases},
      {"scatter_add", num, indexing_cases},
      // SDK 1.7.
      {"layer_norm", floats, norm_cases},
      {"rms_norm", floats, norm_cases},
      {"layer_norm_backward", floats, norm_cases},
      {"rms_norm_backward", floats, norm_cases},
  };
  return checks;
}

}  // namespace conformance
