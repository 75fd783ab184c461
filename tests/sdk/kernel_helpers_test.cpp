// The SDK's helpers that the CPU and CUDA backends share (sdk/cpp/kernel_checks.hpp, reductions.hpp,
// matrix_product.hpp, softmax.hpp, unary_ops.hpp, binary_ops.hpp, visit_dtype): the messages of
// their checks and the values of their folds, rows and ops, against expectations written by hand.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/binary_ops.hpp"
#include "tessera/sdk/cpp/kernel_checks.hpp"
#include "tessera/sdk/cpp/matrix_product.hpp"
#include "tessera/sdk/cpp/reductions.hpp"
#include "tessera/sdk/cpp/softmax.hpp"
#include "tessera/sdk/cpp/unary_ops.hpp"

namespace sdk = tessera::sdk;

namespace {

// A row-major DLTensor over `data` with `shape`; owns its shape and strides.
struct Dense {
  std::vector<int64_t> shape, strides;
  DLTensor t{};
  Dense(void* data, std::vector<int64_t> sizes, DLDataType dtype)
      : shape(std::move(sizes)), strides(shape.size()) {
    int64_t step = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      strides[d] = step;
      step *= shape[d];
    }
    t.data = data;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.data();
  }
};

struct Call {
  std::vector<DLTensor> inputs, outputs;
  std::vector<tessera_attr> attrs;
  std::vector<const tessera_attr*> attr_pointers;
  tessera_kernel_call call{};
  sdk::KernelArgs args() {
    attr_pointers.clear();
    for (const tessera_attr& a : attrs) attr_pointers.push_back(&a);
    call.struct_size = sizeof(call);
    call.inputs = inputs.data();
    call.num_inputs = inputs.size();
    call.outputs = outputs.data();
    call.num_outputs = outputs.size();
    call.attrs = attr_pointers.data();
    call.num_attrs = attr_pointers.size();
    return sdk::KernelArgs(&call);
  }
};

tessera_attr int_attr(const char* name, int64_t value) {
  tessera_attr a{};
  a.struct_size = sizeof(a);
  a.name = name;
  a.kind = TESSERA_ATTR_INT;
  a.int_value = value;
  return a;
}

// A row over consecutive values, as the folds see one.
template <class T>
struct Row {
  const T* first;
  int64_t size;
  template <class F>
  void for_each(F&& f) const {
    for (int64_t k = 0; k < size; ++k) f(k, first[k]);
  }
};
template <class T>
Row<T> row_of(const std::vector<T>& v) {
  return Row<T>{v.data(), static_cast<int64_t>(v.size())};
}
template <size_t N>
Row<bool> flags_of(const bool (&flags)[N]) {
  return Row<bool>{flags, static_cast<int64_t>(N)};
}

constexpr sdk::ArityCheck kArity{{2, " (the test's limit)"}};
constexpr sdk::ArityCheck kArity3{{3, ""}};

}  // namespace

TEST_CASE("sdk kernel checks: the arity, ndim limit with its reason, dtype and shape messages") {
  float a[6] = {}, out[6] = {};
  Dense input(a, {2, 3}, sdk::kFloat32), output(out, {2, 3}, sdk::kFloat32);
  Call call;
  call.inputs = {input.t};
  call.outputs = {output.t};
  CHECK_NOTHROW(kArity(call.args(), "neg", 1, 1));
  CHECK_THROWS_WITH(kArity(call.args(), "add", 2, 1), "add: got 1 inputs and 1 outputs, expected 2 and 1");

  Dense deep(a, {1, 2, 3}, sdk::kFloat32);
  call.inputs = {deep.t};
  CHECK_THROWS_WITH(kArity(call.args(), "neg", 1, 1),
                    "neg: input 0 has ndim 3, expected 0..2 (the test's limit)");

  Dense empty(nullptr, {2, 0}, sdk::kFloat32);  // no data is fine when there are no elements
  call.inputs = {empty.t};
  CHECK_NOTHROW(kArity(call.args(), "neg", 1, 1));
  Dense missing(nullptr, {2, 3}, sdk::kFloat32);
  call.inputs = {missing.t};
  CHECK_THROWS_WITH(kArity(call.args(), "neg", 1, 1), "neg: input 0 has NULL data but 6 elements");

  Dense other(a, {3, 2}, sdk::kFloat32);
  CHECK_THROWS_WITH(sdk::expect_shape("neg", "output", other.t, input.t, "input 0"),
                    "neg: output has shape [3, 2], expected [2, 3] (the shape of input 0)");
  CHECK_THROWS_WITH(sdk::expect_dtype("neg", "output", other.t, sdk::kInt64),
                    "neg: output has dtype float32, expected int64");
}

TEST_CASE("sdk kernel checks: scalar_attr converts by dtype and refuses an integer that does not fit") {
  Call call;
  call.attrs = {int_attr("value", 300)};
  CHECK(sdk::scalar_attr<int32_t>(call.args(), "fill", "value") == 300);
  CHECK(sdk::scalar_attr<double>(call.args(), "fill", "value") == 300.0);  // an INT is read as a FLOAT too
  CHECK(sdk::scalar_attr<bool>(call.args(), "fill", "value"));
  call.attrs = {int_attr("value", int64_t{1} << 40)};
  CHECK_THROWS_WITH(sdk::scalar_attr<int32_t>(call.args(), "fill", "value"),
                    "fill: attribute 'value' is 1099511627776, which does not fit the output dtype int32");
}

TEST_CASE("sdk visit_dtype: the element type of each of the five dtypes, and nothing for another") {
  std::string seen;
  const auto name = [&]<class T>() { seen = sdk::dtype_name(sdk::dtype_of<T>()); };
  for (DLDataType dtype : {sdk::kFloat32, sdk::kFloat64, sdk::kInt32, sdk::kInt64, sdk::kBool}) {
    seen.clear();
    CHECK(sdk::visit_dtype(dtype, name));
    CHECK(seen == sdk::dtype_name(dtype));
  }
  seen = "untouched";
  CHECK_FALSE(sdk::visit_dtype(DLDataType{kDLFloat, 16, 1}, name));
  CHECK(seen == "untouched");
}

TEST_CASE("sdk matrix product: sizes and strides of mm and bmm, and the dim a mismatch names") {
  float a[24] = {}, b[40] = {}, out[30] = {};
  Dense left(a, {2, 3, 4}, sdk::kFloat32), right(b, {2, 4, 5}, sdk::kFloat32),
      product(out, {2, 3, 5}, sdk::kFloat32);
  Call call;
  call.inputs = {left.t, right.t};
  call.outputs = {product.t};
  const sdk::MatrixProduct p = sdk::checked_matrix_product(call.args(), "bmm", true, sdk::kFloat32, kArity3);
  CHECK(p.batch == 2);
  CHECK(p.m == 3);
  CHECK(p.k == 4);
  CHECK(p.n == 5);
  CHECK(p.a_batch == 12);
  CHECK(p.a_row == 4);
  CHECK(p.a_col == 1);
  CHECK(p.b_batch == 20);
  CHECK(p.b_row == 5);

  Dense wrong_k(b, {2, 5, 4}, sdk::kFloat32);
  call.inputs[1] = wrong_k.t;
  CHECK_THROWS_WITH(
      sdk::checked_matrix_product(call.args(), "bmm", true, sdk::kFloat32, kArity3),
      "bmm: input 1 has shape [2, 5, 4], expected size 4 in dim 1 (k, the last dim of input 0)");
}

TEST_CASE("sdk reductions: reduce_ndim, output size and empty-row errors") {
  float a[6] = {}, out[6] = {};
  Call call;
  Dense input(a, {2, 3}, sdk::kFloat32), output(out, {2}, sdk::kFloat32);
  call.inputs = {input.t};
  call.outputs = {output.t};
  call.attrs = {int_attr("reduce_ndim", 1)};
  const sdk::ReductionDims dims =
      sdk::checked_reduction(call.args(), "sum", sdk::kFloat32, sdk::kFloat32, false, kArity);
  CHECK(dims.outer_ndim == 1);
  CHECK(dims.reduced_ndim == 1);

  call.attrs = {int_attr("reduce_ndim", 3)};
  CHECK_THROWS_WITH(sdk::checked_reduction(call.args(), "sum", sdk::kFloat32, sdk::kFloat32, false, kArity),
                    "sum: attribute 'reduce_ndim' is 3, expected 0..2 (the ndim of input 0, shape [2, 3])");
  call.attrs = {int_attr("reduce_ndim", 2)};
  CHECK_THROWS_WITH(sdk::checked_reduction(call.args(), "sum", sdk::kFloat32, sdk::kFloat32, false, kArity),
                    "sum: output has shape [2] (2 elements), expected 1 elements (input 0 has shape [2, 3], "
                    "reduce_ndim 2)");

  Dense empty_rows(a, {2, 0}, sdk::kFloat32);
  call.inputs = {empty_rows.t};
  call.attrs = {int_attr("reduce_ndim", 1)};
  CHECK_NOTHROW(sdk::checked_reduction(call.args(), "sum", sdk::kFloat32, sdk::kFloat32, false, kArity));
  CHECK_THROWS_WITH(
      sdk::checked_reduction(call.args(), "max", sdk::kFloat32, sdk::kFloat32, true, kArity),
      "max: the reduced dims [0] of input 0 (shape [2, 0]) are empty, expected at least one element: "
      "max has no identity");
}

TEST_CASE("sdk reductions: the folds, in row order, with the NaN, first-occurrence and wrapping rules") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Sequential order: 1e8 + 1 rounds back to 1e8 (float's spacing there is 8) at every step, where
  // summing the eight ones first would give 1e8 + 8.
  const std::vector<float> big_then_small = {1e8f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  CHECK(sdk::SumFold::fold(row_of(big_then_small)) == 1e8f);
  CHECK(sdk::ProdFold::fold(row_of(std::vector<float>{2.0f, -3.0f, 0.5f})) == -3.0f);
  CHECK(sdk::MeanFold::fold(row_of(std::vector<double>{1.0, 2.0, 6.0})) == 3.0);
  const float empty_mean = sdk::MeanFold::fold(row_of(std::vector<float>{}));
  CHECK(std::bit_cast<uint32_t>(empty_mean) == 0x7fc00000u);  // the positive quiet NaN

  const std::vector<float> values = {3.0f, 7.0f, -2.0f, 7.0f, -2.0f};
  CHECK(sdk::MaxFold::fold(row_of(values)) == 7.0f);
  CHECK(sdk::MinFold::fold(row_of(values)) == -2.0f);
  CHECK(sdk::ArgmaxFold::fold(row_of(values)) == 1);  // the first of the two 7s
  CHECK(sdk::ArgminFold::fold(row_of(values)) == 2);
  const std::vector<float> with_nan = {1.0f, nan, 9.0f, -9.0f};
  CHECK(std::isnan(sdk::MaxFold::fold(row_of(with_nan))));
  CHECK(std::isnan(sdk::MinFold::fold(row_of(with_nan))));
  CHECK(sdk::ArgmaxFold::fold(row_of(with_nan)) == 1);
  CHECK(sdk::ArgminFold::fold(row_of(with_nan)) == 1);

  // Integer sums accumulate in int64 (no int32 overflow) and wrap in int64 without UB.
  const std::vector<int32_t> large = {std::numeric_limits<int32_t>::max(), 1};
  CHECK(sdk::SumFold::fold(row_of(large)) == int64_t{std::numeric_limits<int32_t>::max()} + 1);
  const std::vector<int64_t> overflow = {std::numeric_limits<int64_t>::max(), 1};
  CHECK(sdk::SumFold::fold(row_of(overflow)) == std::numeric_limits<int64_t>::min());
  const bool three_of_four[] = {true, true, false, true};
  CHECK(sdk::SumFold::fold(flags_of(three_of_four)) == 3);

  const Row<bool> none{nullptr, 0};
  const bool one_false[] = {true, false, true}, last_true[] = {false, false, true};
  CHECK(sdk::AllFold::fold(none));
  CHECK_FALSE(sdk::AllFold::fold(flags_of(one_false)));
  CHECK_FALSE(sdk::AnyFold::fold(none));
  CHECK(sdk::AnyFold::fold(flags_of(last_true)));
}

TEST_CASE("sdk softmax: a strided row, log_softmax, the large-input shift and a NaN row") {
  // Row [0, ln 3] is [1/4, 3/4]; every other element of x is padding the stride skips.
  const double x[4] = {0.0, 99.0, std::log(3.0), 99.0};
  double y[2] = {};
  sdk::softmax_row<double, false>(x, 2, y, 1, 2);
  CHECK(y[0] == doctest::Approx(0.25).epsilon(1e-15));
  CHECK(y[1] == doctest::Approx(0.75).epsilon(1e-15));
  sdk::softmax_row<double, true>(x, 2, y, 1, 2);
  CHECK(y[0] == doctest::Approx(std::log(0.25)).epsilon(1e-14));
  CHECK(y[1] == doctest::Approx(std::log(0.75)).epsilon(1e-14));

  const float huge[2] = {1000.0f, 1000.0f};  // exp(1000) overflows float without the max shift
  float half[2] = {};
  sdk::softmax_row<float, false>(huge, 1, half, 1, 2);
  CHECK(half[0] == 0.5f);
  CHECK(half[1] == 0.5f);

  const float with_nan[3] = {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  float out[3] = {};
  sdk::softmax_row<float, false>(with_nan, 1, out, 1, 3);
  for (float v : out) CHECK(std::isnan(v));

  Call call;
  float a[6] = {}, o[6] = {};
  Dense input(a, {2, 3}, sdk::kFloat32), output(o, {2, 3}, sdk::kFloat32);
  call.inputs = {input.t};
  call.outputs = {output.t};
  const sdk::SoftmaxRows rows = sdk::checked_softmax(call.args(), "softmax", sdk::kFloat32, kArity);
  CHECK(rows.row_ndim == 1);
  CHECK(rows.length == 3);
  CHECK(rows.input_stride == 1);
  CHECK(rows.output_stride == 1);
}

TEST_CASE("sdk unary ops: wrapping integers, NaN through relu, sigmoid's far tails and gelu's values") {
  namespace ops = sdk::unary_ops;
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  CHECK(ops::Neg::apply(kMin) == kMin);  // -INT_MIN wraps, without undefined behaviour
  CHECK(ops::Abs::apply(kMin) == kMin);
  CHECK(ops::Abs::apply(int64_t{-7}) == 7);
  CHECK(std::bit_cast<uint32_t>(ops::Abs::apply(-0.0f)) == 0u);  // the sign bit cleared
  CHECK(std::isnan(ops::Relu::apply(std::numeric_limits<float>::quiet_NaN())));
  CHECK(ops::Relu::apply(-3) == 0);
  CHECK(ops::Sigmoid::apply(-1000.0) == 0.0);  // exp(1000) would overflow: inf / inf is NaN
  CHECK(ops::Sigmoid::apply(1000.0) == 1.0);
  CHECK(ops::Sigmoid::apply(0.0f) == 0.5f);
  CHECK(ops::Gelu::apply(0.0) == 0.0);
  CHECK(ops::Gelu::apply(1.0) == doctest::Approx(0.8413447460685429).epsilon(1e-15));  // 1 * Phi(1)
  CHECK(ops::GeluGrad::apply(0.0) == 0.5);                                             // Phi(0) + 0
  CHECK(ops::Sqrt::apply(2.0) == std::sqrt(2.0));
}

TEST_CASE("sdk binary ops: wrapping integers, bool arithmetic, NaN-first maximum and minimum, comparisons") {
  namespace ops = sdk::binary_ops;
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max(), kMin = std::numeric_limits<int32_t>::min();
  CHECK(ops::Add::apply(kMax, 1) == kMin);
  CHECK(ops::Sub::apply(kMin, 1) == kMax);
  CHECK(ops::Mul::apply(int64_t{1} << 62, int64_t{4}) == 0);
  CHECK(ops::Add::apply(true, true));  // "or": bool arithmetic saturates
  CHECK_FALSE(ops::Mul::apply(true, false));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float other_nan = std::bit_cast<float>(0x7fc00001u);                           // another payload
  CHECK(std::bit_cast<uint32_t>(ops::Maximum::apply(other_nan, nan)) == 0x7fc00001u);  // the first NaN wins
  CHECK(std::bit_cast<uint32_t>(ops::Minimum::apply(1.0f, other_nan)) == 0x7fc00001u);
  CHECK(ops::Maximum::apply(-2, 5) == 5);
  CHECK(ops::Minimum::apply(-2, 5) == -2);
  CHECK(ops::BitwiseXor::apply(0b1100, 0b1010) == 0b0110);
  CHECK_FALSE(ops::Eq::apply(nan, nan));
  CHECK(ops::Ne::apply(nan, nan));
  CHECK_FALSE(ops::Lt::apply(nan, 1.0f));
  CHECK(ops::Ge::apply(2.0, 2.0));
  CHECK(ops::Pow::apply(2.0, 10.0) == 1024.0);
  CHECK(ops::Div::apply(1.0, 0.0) == std::numeric_limits<double>::infinity());
}
