// The CPU backend's fold kernels (KERNELS.md "Folds", plugins/backend-cpu/folds.cpp) against their
// definition: the element-wise kernel of the same op, called once per row, accumulator on the side
// the call names (for bfloat16 and float16, which have no element-wise kernels, that is the float32
// kernel with the operands cast around it: a rounding per row, as the fold's). Every fold and
// dtype, both sides, empty and one-row folds, rows contiguous and
// transposed (strided), in place and into a separate output. Values include signed zeros and NaNs
// with payloads, where maximum, minimum and the NaN rule make the operand order visible.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "tensor/kernel_operand.hpp"
#include "tensor/tensor_impl.hpp"

namespace ts = tessera;
namespace dispatch = tessera::dispatch;

namespace {

struct FoldOp {
  const char* fold;
  const char* binary;
  std::vector<ts::DType> dtypes;
};

const std::vector<FoldOp>& fold_ops() {
  static const std::vector<FoldOp> ops = {
      {"fold_add",
       "add",
       {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64, ts::kBool, ts::kBFloat16, ts::kFloat16}},
      {"fold_mul",
       "mul",
       {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64, ts::kBool, ts::kBFloat16, ts::kFloat16}},
      {"fold_maximum",
       "maximum",
       {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64, ts::kBool, ts::kBFloat16, ts::kFloat16}},
      {"fold_minimum",
       "minimum",
       {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64, ts::kBool, ts::kBFloat16, ts::kFloat16}},
      {"fold_bitwise_and", "bitwise_and", {ts::kInt32, ts::kInt64, ts::kBool}},
      {"fold_bitwise_or", "bitwise_or", {ts::kInt32, ts::kInt64, ts::kBool}},
      {"fold_bitwise_xor", "bitwise_xor", {ts::kInt32, ts::kInt64, ts::kBool}},
  };
  return ops;
}

// n values: floats from a few magnitudes, with ties, signed zeros and NaNs of distinct payloads;
// integers over the whole range; bools.
ts::Tensor random_tensor(std::mt19937_64& rng, ts::DType dtype, int64_t n) {
  std::vector<double> floats;
  std::vector<int64_t> integers;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t pick = rng() % 16;
    double v = std::ldexp(static_cast<double>(rng() % 2001) - 1000.0, static_cast<int>(rng() % 7) - 3);
    if (pick == 0) v = 0.0;
    if (pick == 1) v = -0.0;
    if (pick == 2) v = std::nan(std::to_string(rng() % 900 + 1).c_str());
    floats.push_back(v);
    integers.push_back(static_cast<int64_t>(rng()));
  }
  switch (dtype) {
    case ts::kFloat32: {
      std::vector<float> values;
      for (double v : floats)
        values.push_back(std::isnan(v) ? std::nanf(std::to_string(rng() % 900 + 1).c_str())
                                       : static_cast<float>(v));
      return ts::from_values(values, {n}, dtype);
    }
    case ts::kFloat64:
      return ts::from_values(floats, {n}, dtype);
    // Rounded from float64; their NaNs are all the one quiet NaN the conversion gives.
    case ts::kBFloat16:
    case ts::kFloat16:
      return ts::from_values(floats, {n}).to(dtype);
    case ts::kInt32: {
      std::vector<int32_t> values;
      for (int64_t v : integers) values.push_back(static_cast<int32_t>(v));
      return ts::from_values(values, {n}, dtype);
    }
    case ts::kInt64:
      return ts::from_values(integers, {n}, dtype);
    default: {
      std::vector<bool> values;
      for (int64_t v : integers) values.push_back((v & 1) != 0);
      return ts::from_values(values, {n}, dtype);
    }
  }
}

std::string buffer_bytes(const ts::Tensor& t) {
  const ts::TensorImpl& impl = *t.impl();
  const auto item = static_cast<int64_t>(ts::itemsize(impl.dtype()));
  return std::string(static_cast<const char*>(impl.storage()->data.load()) + impl.offset() * item,
                     static_cast<size_t>(impl.numel() * item));
}

// Row i of an n x m matrix held in `storage` (n * m elements): contiguous rows, or the transpose of
// an m x n matrix (column stride n).
struct Rows {
  const ts::TensorImpl* storage;
  int64_t n, m;
  bool transposed;
  int64_t row_stride() const { return transposed ? 1 : m; }
  int64_t column_stride() const { return transposed ? n : 1; }
};

}  // namespace

TEST_CASE("every fold is its element-wise op applied row after row, on the side the call names") {
  std::mt19937_64 rng(5150);
  const int64_t one = 1;
  size_t compared = 0;
  for (const FoldOp& op : fold_ops()) {
    for (const ts::DType dtype : op.dtypes) {
      for (const auto& sizes :
           std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 1}, {6, 13}, {5, 0}, {9, 4}}) {
        // Named, not structured bindings: clang 14 cannot capture one.
        const int64_t n = sizes.first, m = sizes.second;
        for (const int side : {0, 1}) {
          for (const bool transposed : {false, true}) {
            for (const bool in_place : {true, false}) {
              CAPTURE(op.fold);
              CAPTURE(ts::dtype_name(dtype));
              CAPTURE(n);
              CAPTURE(m);
              CAPTURE(side);
              CAPTURE(transposed);
              CAPTURE(in_place);
              const ts::Tensor matrix = random_tensor(rng, dtype, n * m);
              const ts::Tensor acc = random_tensor(rng, dtype, m);
              const Rows rows{matrix.impl().get(), n, m, transposed};
              // The oracle: one element-wise call per row, in place into a copy of the accumulator.
              const ts::Tensor expected = acc.clone();
              for (int64_t i = 0; i < n; ++i) {
                const int64_t stride = rows.column_stride();
                const dispatch::Operand row =
                    dispatch::operand(*rows.storage, {&m, 1}, {&stride, 1}, i * rows.row_stride());
                const dispatch::Operand into = dispatch::operand(*expected.impl());
                if (side == 0)
                  dispatch::call_kernel(op.binary, dtype, {into, row}, {into});
                else
                  dispatch::call_kernel(op.binary, dtype, {row, into}, {into});
              }
              // The fold, in one call.
              const ts::Tensor folded =
                  in_place ? acc.clone() : ts::zeros({m}, ts::TensorOptions().dtype(dtype));
              const int64_t sizes[2] = {n, m}, strides[2] = {rows.row_stride(), rows.column_stride()};
              const dispatch::Operand all_rows = dispatch::operand(*rows.storage, sizes, strides);
              const dispatch::Operand from = dispatch::operand(*(in_place ? folded : acc).impl());
              const dispatch::Operand out = dispatch::operand_range(*folded.impl(), 0, m, one);
              dispatch::call_kernel(op.fold, dtype, {from, all_rows}, {out},
                                    {dispatch::Attr::integer("acc_side", side)});
              CHECK(buffer_bytes(folded) == buffer_bytes(expected));
              ++compared;
            }
          }
        }
      }
    }
  }
  CHECK(compared == 37 * 5 * 2 * 2 * 2);  // 37 (fold, dtype) pairs
}

TEST_CASE("a fold call with bad arguments is an error naming what was wrong") {
  const ts::Tensor acc = ts::zeros({4});
  const ts::Tensor matrix = ts::zeros({2, 3});
  const dispatch::Operand a = dispatch::operand(*acc.impl());
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const ts::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Rows of another width than the accumulator.
  CHECK(message([&] {
          dispatch::call_kernel("fold_add", ts::kFloat32, {a, dispatch::operand(*matrix.impl())}, {a},
                                {dispatch::Attr::integer("acc_side", 0)});
        })
            .find("fold_add: input 1 has shape [2, 3], expected size 4 in dim 1 (the width of input 0, the "
                  "accumulator)") != std::string::npos);
  const ts::Tensor rows = ts::zeros({2, 4});
  const dispatch::Operand r = dispatch::operand(*rows.impl());
  // A side that is neither.
  CHECK(message([&] {
          dispatch::call_kernel("fold_maximum", ts::kFloat32, {a, r}, {a},
                                {dispatch::Attr::integer("acc_side", 2)});
        })
            .find("fold_maximum: attribute 'acc_side' is 2, expected 0 (the accumulator is the op's left "
                  "operand) or 1 "
                  "(its right)") != std::string::npos);
  // No side at all.
  CHECK(message([&] {
          dispatch::call_kernel("fold_add", ts::kFloat32, {a, r}, {a});
        }).find("acc_side") != std::string::npos);
  // Rows that are not a matrix.
  CHECK(message([&] {
          dispatch::call_kernel("fold_add", ts::kFloat32, {a, a}, {a},
                                {dispatch::Attr::integer("acc_side", 0)});
        }).find("fold_add: input 1 has ndim 1 (shape [4]), expected 2") != std::string::npos);
  // A bitwise fold on floats: no such kernel.
  CHECK(message([&] {
          dispatch::call_kernel("fold_bitwise_or", ts::kFloat32, {a, r}, {a},
                                {dispatch::Attr::integer("acc_side", 0)});
        }).find("op 'fold_bitwise_or' has no kernel for dtype float32 on backend 'cpu'") !=
        std::string::npos);
}
