// The case makers: for one (op, key dtype), the cases that exercise the op's kernel through the
// public API. Each op family lives in its own file (cases_<family>.cpp).
#pragma once

#include <string>

#include "check_group.hpp"

namespace conformance {

using CaseMaker = CaseGroup (*)(ValueSource& values, const std::string& op, tessera::DType dtype);

// add sub mul div pow maximum minimum eq ne lt le gt ge: through ts::add, ... (and, for add mul
// maximum minimum, the in-place reduction of a collective, where out aliases the first input).
CaseGroup binary_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// bitwise_and/or/xor: no user call but the BAND/BOR/BXOR reductions of ts::dist::all_reduce.
CaseGroup bitwise_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// fold_add fold_mul fold_maximum fold_minimum fold_bitwise_*: the chains of a ring all_reduce over
// several simulated ranks, which the plan evaluator folds with one call each.
CaseGroup fold_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// neg abs relu exp log sqrt tanh sigmoid gelu.
CaseGroup unary_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// gelu_grad: the gradient autograd computes for ts::gelu.
CaseGroup gelu_grad_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// copy: contiguous() of views, clone(), copy_ into views.
CaseGroup copy_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// cast: to(dtype) to each of the other dtypes.
CaseGroup cast_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// fill arange eye: factories on the tested backend.
CaseGroup creation_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// uniform normal: ts::rand/randn with equal generators on both backends.
CaseGroup random_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// sum prod mean max min all any argmax argmin: over every dim and over subsets.
CaseGroup reduction_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// mm bmm: through ts::matmul.
CaseGroup matmul_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// softmax log_softmax.
CaseGroup softmax_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
// gather scatter_add (SDK 1.6): through ts::gather, ts::index_select and ts::scatter_add.
CaseGroup indexing_cases(ValueSource& values, const std::string& op, tessera::DType dtype);

// SDK 1.6 (cases_transformer.cpp): sin cos through ts::sin/ts::cos; where through ts::where (with
// broadcast operands); cumsum along the last and the first dim.
CaseGroup trig_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
CaseGroup where_cases(ValueSource& values, const std::string& op, tessera::DType dtype);
CaseGroup cumsum_cases(ValueSource& values, const std::string& op, tessera::DType dtype);

// SDK 1.7 (cases_norms.cpp): layer_norm rms_norm through ts::layer_norm/ts::rms_norm; their backward
// kernels through the gradients of x, the weight and the bias.
CaseGroup norm_cases(ValueSource& values, const std::string& op, tessera::DType dtype);

struct OpCheck {
  std::string op;
  std::vector<tessera::DType> key_dtypes;  // the catalogue's key dtypes (sdk/KERNELS.md)
  CaseMaker make;
};

// Every op of sdk/KERNELS.md, in its order.
const std::vector<OpCheck>& op_checks();

}  // namespace conformance
