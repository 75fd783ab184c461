// bfloat16, float16, int8 and uint8 tensors: type promotion as torch.promote_types, casts between
// every pair (with PyTorch's wrap rules for int8/uint8), fill and copy, DLPack with PyTorch's type
// codes, printing, and arithmetic: bfloat16/float16 ops compute in float32 and round once, against
// an oracle here that rounds with double arithmetic; int8/uint8 ops wrap as PyTorch's do.
#include <dlpack/dlpack.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace ts = tessera;

namespace {

// Round-to-nearest-even of float x to a format of `precision` significant bits whose least normal
// exponent is `min_exponent`, by the hardware's double addition: adding 2^52 q (q the quantum of
// x's binade) leaves a double whose unit is q. Independent of the SDK's integer conversion.
float round_to(float x, int precision, int min_exponent, double overflow) {
  if (std::isnan(x) || std::isinf(x)) return x;  // ilogb of an infinity is INT_MAX
  const double magnitude = std::fabs(static_cast<double>(x));
  const int exponent = magnitude == 0 ? min_exponent : std::max(std::ilogb(magnitude), min_exponent);
  const double big = std::ldexp(1.0, 52 + exponent - (precision - 1));
  const volatile double sum = magnitude + big;
  double rounded = sum - big;
  if (rounded >= overflow) rounded = INFINITY;
  return static_cast<float>(std::copysign(rounded, static_cast<double>(x)));
}
float bf16(float x) { return round_to(x, 8, -126, 0x1p128); }
float fp16(float x) { return round_to(x, 11, -14, 0x1p16); }

// The raw 16-bit patterns of a two-byte-float tensor, read through its DLPack export.
std::vector<uint16_t> raw_bits(const ts::Tensor& t) {
  DLManagedTensor* managed = ts::to_dlpack(t.contiguous());
  const auto* first =
      static_cast<const uint16_t*>(managed->dl_tensor.data) + managed->dl_tensor.byte_offset / 2;
  std::vector<uint16_t> bits(first, first + t.numel());
  managed->deleter(managed);
  return bits;
}

// Bitwise equality of a bfloat16/float16 tensor's values with `expected` (read as float32, which
// holds every value exactly).
void check_exact(const ts::Tensor& t, ts::DType dtype, const std::vector<float>& expected) {
  REQUIRE(t.dtype() == dtype);
  const std::vector<float> got = t.to(ts::kFloat32).to_vector<float>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(expected[i]),
                  "index " << i << ": got " << got[i] << ", expected " << expected[i]);
}

}  // namespace

TEST_CASE("the new dtypes: names, item sizes, categories") {
  CHECK(ts::dtype_name(ts::kBFloat16) == "bfloat16");
  CHECK(ts::dtype_name(ts::kFloat16) == "float16");
  CHECK(ts::dtype_name(ts::kInt8) == "int8");
  CHECK(ts::dtype_name(ts::kUInt8) == "uint8");
  CHECK(ts::itemsize(ts::kBFloat16) == 2);
  CHECK(ts::itemsize(ts::kFloat16) == 2);
  CHECK(ts::itemsize(ts::kInt8) == 1);
  CHECK(ts::itemsize(ts::kUInt8) == 1);
  CHECK(ts::is_floating(ts::kBFloat16));
  CHECK(ts::is_floating(ts::kFloat16));
  CHECK_FALSE(ts::is_floating(ts::kInt8));
  CHECK(ts::is_integral(ts::kInt8, false));
  CHECK(ts::is_integral(ts::kUInt8, false));
  CHECK_FALSE(ts::is_integral(ts::kBFloat16, true));
  // Existing values keep their numbers (kernel tables, files, messages index by them).
  CHECK(static_cast<int>(ts::kBool) == 0);
  CHECK(static_cast<int>(ts::kFloat64) == 4);
  CHECK(static_cast<int>(ts::kBFloat16) == 5);
  CHECK(static_cast<int>(ts::kUInt8) == 8);
}

TEST_CASE("promote_types is torch.promote_types on all nine dtypes (int8 with uint8: int32, not int16)") {
  const ts::DType order[] = {ts::kBool,     ts::kInt32,   ts::kInt64, ts::kFloat32, ts::kFloat64,
                             ts::kBFloat16, ts::kFloat16, ts::kInt8,  ts::kUInt8};
  // Rows and columns in that order, as PyTorch 2.15 prints torch.promote_types(row, column); the
  // one entry PyTorch gives as int16 (int8 with uint8) is int32 here, Tessera having no int16.
  const char* table[9][9] = {
      {"bool", "int32", "int64", "float32", "float64", "bfloat16", "float16", "int8", "uint8"},
      {"int32", "int32", "int64", "float32", "float64", "bfloat16", "float16", "int32", "int32"},
      {"int64", "int64", "int64", "float32", "float64", "bfloat16", "float16", "int64", "int64"},
      {"float32", "float32", "float32", "float32", "float64", "float32", "float32", "float32", "float32"},
      {"float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64"},
      {"bfloat16", "bfloat16", "bfloat16", "float32", "float64", "bfloat16", "float32", "bfloat16",
       "bfloat16"},
      {"float16", "float16", "float16", "float32", "float64", "float32", "float16", "float16", "float16"},
      {"int8", "int32", "int64", "float32", "float64", "bfloat16", "float16", "int8",
       "int32" /* torch: int16 */},
      {"uint8", "int32", "int64", "float32", "float64", "bfloat16", "float16", "int32" /* torch: int16 */,
       "uint8"},
  };
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(ts::dtype_name(ts::promote_types(order[i], order[j])) == table[i][j]);
    }
  // Result types of ops: a float scalar keeps a two-byte float tensor's dtype; mixed tensors promote.
  const ts::Tensor b = ts::tensor({1.f, 2.f}, ts::kBFloat16);
  const ts::Tensor h = ts::tensor({1.f, 2.f}, ts::kFloat16);
  const ts::Tensor i8 = ts::tensor({1, 2}, ts::kInt8);
  const ts::Tensor u8 = ts::tensor({1, 2}, ts::kUInt8);
  CHECK((b + 2.5).dtype() == ts::kBFloat16);
  CHECK((b + h).dtype() == ts::kFloat32);
  CHECK((b + i8).dtype() == ts::kBFloat16);
  CHECK((b + ts::tensor({1.f, 2.f})).dtype() == ts::kFloat32);
  CHECK((i8 + u8).dtype() == ts::kInt32);
  CHECK((u8 + ts::tensor({true, false})).dtype() == ts::kUInt8);
  CHECK((i8 + 2.5).dtype() == ts::kFloat32);
  test::check_values<int32_t>(i8 + u8, {2}, {2, 4});
}

TEST_CASE("casts to and from bfloat16 and float16 round once, to nearest even") {
  // 1 + 2^-8 is a bfloat16 tie (rounds to 1), 1 + 3 * 2^-8 one rounding up (to 1 + 2^-6); 65520 is
  // float16's overflow tie (infinity), 2^-25 its tie with zero, 3 * 2^-25 rounds to 2^-23.
  const std::vector<float> x = {1.f + 0x1p-8f, 1.f + 3 * 0x1p-8f, 65520.f,  65519.f, 0x1p-25f, 3 * 0x1p-25f,
                                -0.f,          -1e-30f,           INFINITY, 1.3f,    -2.75f};
  const ts::Tensor source = ts::from_values(x, {static_cast<int64_t>(x.size())});
  std::vector<float> want_b, want_h;
  for (float v : x) {
    want_b.push_back(bf16(v));
    want_h.push_back(fp16(v));
  }
  check_exact(source.to(ts::kBFloat16), ts::kBFloat16, want_b);
  check_exact(source.to(ts::kFloat16), ts::kFloat16, want_h);
  CHECK(want_h[2] == INFINITY);
  CHECK(want_h[4] == 0.f);
  CHECK(want_b[0] == 1.f);
  // Raw patterns, as PyTorch gives them: 1.3 -> bfloat16 0x3fa6; -2.75 -> float16 0xc180.
  CHECK(raw_bits(source.to(ts::kBFloat16))[9] == 0x3fa6);
  CHECK(raw_bits(source.to(ts::kFloat16))[10] == 0xc180);
  CHECK(raw_bits(source.to(ts::kFloat16))[6] == 0x8000);  // -0 keeps its sign
  // NaN becomes the positive quiet NaN.
  const ts::Tensor nan = ts::tensor({NAN, -NAN});
  CHECK(raw_bits(nan.to(ts::kBFloat16)) == std::vector<uint16_t>{0x7fc0, 0x7fc0});
  CHECK(raw_bits(nan.to(ts::kFloat16)) == std::vector<uint16_t>{0x7e00, 0x7e00});
  // Back to float32 and float64: exact.
  check_exact(source.to(ts::kBFloat16).to(ts::kFloat64).to(ts::kFloat32), ts::kFloat32, want_b);
  // bfloat16 <-> float16: through float32, one rounding (65504 is not a bfloat16: 65536).
  check_exact(ts::tensor({65504.f, 1.f + 0x1p-10f}, ts::kFloat16).to(ts::kBFloat16), ts::kBFloat16,
              {65536.f, 1.f});
  check_exact(ts::tensor({65536.f, 0x1p-20f}, ts::kBFloat16).to(ts::kFloat16), ts::kFloat16,
              {INFINITY, 0x1p-20f});
  // float64 goes through float32 as in PyTorch: 1 + 2^-8 + 2^-30 is first 1 + 2^-8, a tie, so 1
  // (PyTorch 2.15 gives bits 0x3f80 too), where one rounding would give 1 + 2^-7.
  check_exact(ts::tensor({1.0 + 0x1p-8 + 0x1p-30}, ts::kFloat64).to(ts::kBFloat16), ts::kBFloat16, {1.f});
  // Integers and bool: 257 is no bfloat16 (a tie: 256), 2049 no float16 (2048).
  check_exact(ts::tensor({257, -3}).to(ts::kBFloat16), ts::kBFloat16, {256.f, -3.f});
  check_exact(ts::tensor({2049, 7}, ts::kInt32).to(ts::kFloat16), ts::kFloat16, {2048.f, 7.f});
  check_exact(ts::tensor({true, false}).to(ts::kFloat16), ts::kFloat16, {1.f, 0.f});
  test::check_values<bool>(ts::tensor({0.5f, 0.f, -0.f, NAN}, ts::kBFloat16).to(ts::kBool), {4},
                           {true, false, false, true});
  test::check_values<int32_t>(ts::tensor({-2.75f, 300.5f}, ts::kBFloat16).to(ts::kInt32), {2}, {-2, 300});
}

TEST_CASE("casts to int8 and uint8 wrap modulo 256 after truncation toward zero through int64") {
  // PyTorch leaves out-of-range float -> int8/uint8 undefined; Tessera defines it as the float to
  // int64 (truncation, NaN -> 0, saturating), then wrapped. PyTorch 2.15 on x86-64 gives the same:
  // int8 [-1, 44, 127, 127, -1, 0, 0, 0, 0], uint8 [255, 44, 127, 127, 255, 0, 0, 0, 0].
  const ts::Tensor f = ts::tensor({-1.5f, 300.7f, -129.9f, 127.9f, 255.9f, 256.f, -0.9f, 1e10f, NAN});
  test::check_values<int32_t>(f.to(ts::kInt8).to(ts::kInt32), {9}, {-1, 44, 127, 127, -1, 0, 0, 0, 0});
  test::check_values<int32_t>(f.to(ts::kUInt8).to(ts::kInt32), {9}, {255, 44, 127, 127, 255, 0, 0, 0, 0});
  test::check_values<int32_t>(f.to(ts::kFloat64).to(ts::kInt8).to(ts::kInt32), {9},
                              {-1, 44, 127, 127, -1, 0, 0, 0, 0});
  // In bfloat16 300.7 is 300, -129.9 is -130, 127.9 is 128 and 255.9 is 256.
  test::check_values<int32_t>(f.to(ts::kBFloat16).to(ts::kUInt8).to(ts::kInt32), {9},
                              {255, 44, 126, 128, 0, 0, 0, 0, 0});
  // Integers wrap; int8 and uint8 widen exactly.
  test::check_values<int32_t>(ts::tensor({300, -129, 128, 255}).to(ts::kInt8).to(ts::kInt32), {4},
                              {44, 127, -128, -1});
  test::check_values<int64_t>(ts::tensor({-1, 256, 257}).to(ts::kUInt8).to(ts::kInt64), {3}, {255, 0, 1});
  test::check_values<int32_t>(ts::tensor({-128, 127}, ts::kInt8).to(ts::kUInt8).to(ts::kInt32), {2},
                              {128, 127});
  test::check_values<float>(ts::tensor({-128, 127}, ts::kInt8).to(ts::kFloat32), {2}, {-128, 127});
  test::check_values<double>(ts::tensor({255, 0}, ts::kUInt8).to(ts::kFloat64), {2}, {255, 0});
  test::check_values<bool>(ts::tensor({0, 2}, ts::kUInt8).to(ts::kBool), {2}, {false, true});
  check_exact(ts::tensor({-128, 127}, ts::kInt8).to(ts::kBFloat16), ts::kBFloat16, {-128.f, 127.f});
  check_exact(ts::tensor({255}, ts::kUInt8).to(ts::kBFloat16), ts::kBFloat16, {255.f});  // 8 bits: exact
  CHECK(ts::tensor({200}, ts::kUInt8).item().to<int64_t>() == 200);
  CHECK(ts::tensor({-1, 300}).to(ts::kUInt8).to_vector<uint8_t>() == std::vector<uint8_t>{255, 44});
  CHECK(ts::tensor({-1.5f, 127.f}).to_vector<int8_t>() == std::vector<int8_t>{-1, 127});
  CHECK(ts::tensor({-7}, ts::kInt8).item().to<int64_t>() == -7);
  CHECK(ts::tensor({1.5f}, ts::kFloat16).item().to<double>() == 1.5);
}

TEST_CASE("fill, copy_ and views of the new dtypes") {
  ts::Tensor b = ts::zeros({2, 3}, ts::kBFloat16);
  check_exact(b, ts::kBFloat16, {0, 0, 0, 0, 0, 0});
  b.fill_(1.3);
  check_exact(b, ts::kBFloat16, std::vector<float>(6, bf16(1.3f)));
  // As a float32 fill of 1e300 gives infinity, so does a float16 one of 70000.
  check_exact(ts::full({2}, 70000.0, ts::kFloat16), ts::kFloat16, {INFINITY, INFINITY});
  test::check_values<int32_t>(ts::full({2}, 255, ts::kUInt8).to(ts::kInt32), {2}, {255, 255});
  test::check_values<int32_t>(ts::full({2}, -128, ts::kInt8).to(ts::kInt32), {2}, {-128, -128});
  // A value the integer type cannot hold is refused (PyTorch: "without overflow"), not wrapped.
  CHECK_THROWS_WITH_AS(ts::full({2}, 300, ts::kUInt8),
                       doctest::Contains("300, which does not fit the output dtype uint8"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::zeros({2}, ts::kInt8).fill_(-129),
                       doctest::Contains("does not fit the output dtype int8"), ts::Error);
  // copy_ casts into a non-contiguous view; the transpose of a bfloat16 tensor copies exactly.
  ts::Tensor dst = ts::zeros({3, 2}, ts::kBFloat16);
  dst.t().copy_(ts::tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 1.f + 0x1p-7f + 0x1p-9f}}));
  check_exact(dst, ts::kBFloat16, {1, 4, 2, 5, 3, bf16(1.f + 0x1p-7f + 0x1p-9f)});
  check_exact(dst.t().contiguous(), ts::kBFloat16, {1, 2, 3, 4, 5, bf16(1.f + 0x1p-7f + 0x1p-9f)});
  ts::Tensor bytes = ts::zeros({4}, ts::kUInt8);
  bytes.slice(0, 1, 3).copy_(ts::tensor({-1, 256}));
  test::check_values<int32_t>(bytes.to(ts::kInt32), {4}, {0, 255, 0, 0});
  // Empty and 0-d.
  CHECK(ts::zeros({0, 3}, ts::kFloat16).to(ts::kInt8).numel() == 0);
  check_exact(ts::scalar_tensor(2.5, ts::kBFloat16), ts::kBFloat16, {2.5f});
}

TEST_CASE("DLPack carries the new dtypes with PyTorch's codes, both ways") {
  struct Case {
    ts::DType dtype;
    DLDataType dl;
  };
  for (const Case& c : {Case{ts::kBFloat16, {kDLBfloat, 16, 1}}, Case{ts::kFloat16, {kDLFloat, 16, 1}},
                        Case{ts::kInt8, {kDLInt, 8, 1}}, Case{ts::kUInt8, {kDLUInt, 8, 1}}}) {
    CAPTURE(ts::dtype_name(c.dtype));
    const ts::Tensor t = ts::tensor({1.f, 2.f, 3.f}).to(c.dtype);
    DLManagedTensor* managed = ts::to_dlpack(t);
    CHECK(managed->dl_tensor.dtype.code == c.dl.code);
    CHECK(managed->dl_tensor.dtype.bits == c.dl.bits);
    CHECK(managed->dl_tensor.dtype.lanes == 1);
    const ts::Tensor back = ts::from_dlpack(managed);
    CHECK(back.dtype() == c.dtype);
    test::check_values<float>(back.to(ts::kFloat32), {3}, {1, 2, 3});
  }
  // A producer's bfloat16 bits (as torch exports them): 1.0, -2.5, 1/3 rounded.
  std::vector<uint16_t> bits = {0x3f80, 0xc020, 0x3eab};
  int64_t shape = 3, stride = 1;
  int deletions = 0;
  DLManagedTensor foreign{};
  foreign.dl_tensor = {bits.data(), {kDLCPU, 0}, 1, {kDLBfloat, 16, 1}, &shape, &stride, 0};
  foreign.manager_ctx = &deletions;
  foreign.deleter = [](DLManagedTensor* self) { ++*static_cast<int*>(self->manager_ctx); };
  {
    const ts::Tensor imported = ts::from_dlpack(&foreign);
    check_exact(imported, ts::kBFloat16, {1.f, -2.5f, std::bit_cast<float>(0x3eab0000u)});
  }
  CHECK(deletions == 1);
}

TEST_CASE("printing names the dtype") {
  const std::string b = ts::tensor({1.5f, -2.f}, ts::kBFloat16).to_string();
  CHECK(b.find("dtype=bfloat16") != std::string::npos);
  CHECK(b.find("1.5") != std::string::npos);
  CHECK(ts::tensor({1, -2}, ts::kInt8).to_string().find("dtype=int8") != std::string::npos);
  CHECK(ts::tensor({255}, ts::kUInt8).to_string().find("255") != std::string::npos);
  CHECK(ts::tensor({0.5f}, ts::kFloat16).to_string().find("dtype=float16") != std::string::npos);
}

TEST_CASE("bfloat16/float16 element-wise ops compute in float32 and round once") {
  const std::vector<float> xs = {1.f, 255.f, 3.140625f, -0.0078125f, 1e-3f, 300.f, 65504.f, -7.5f};
  const std::vector<float> ys = {0x1p-8f, 1.f, 2.71875f, 1e3f, 3.f, -0.5f, 65504.f, 0.125f};
  for (const ts::DType dtype : {ts::kBFloat16, ts::kFloat16}) {
    CAPTURE(ts::dtype_name(dtype));
    const auto round = [&](float v) { return dtype == ts::kBFloat16 ? bf16(v) : fp16(v); };
    std::vector<float> a, b;
    for (size_t i = 0; i < xs.size(); ++i) {
      a.push_back(round(xs[i]));
      b.push_back(round(ys[i]));
    }
    const ts::Tensor ta = ts::from_values(a, {8}).to(dtype);
    const ts::Tensor tb = ts::from_values(b, {8}).to(dtype);
    std::vector<float> sum, product, quotient, exp_a, max_ab;
    for (size_t i = 0; i < a.size(); ++i) {
      sum.push_back(round(a[i] + b[i]));
      product.push_back(round(a[i] * b[i]));
      quotient.push_back(round(a[i] / b[i]));
      exp_a.push_back(round(std::exp(a[i] / 256.f)));
      max_ab.push_back(std::max(a[i], b[i]));
    }
    check_exact(ta + tb, dtype, sum);
    check_exact(ta * tb, dtype, product);
    check_exact(ta / tb, dtype, quotient);
    check_exact(ts::exp(ta / 256), dtype, exp_a);
    check_exact(ts::maximum(ta, tb), dtype, max_ab);
    // A non-contiguous operand (a column of a wider tensor).
    ts::Tensor wide = ts::zeros({8, 2}, dtype);
    ts::Tensor column = wide.select(1, 1);
    column.copy_(ta);
    check_exact(column + tb, dtype, sum);
    check_exact(tb.unsqueeze(1).expand({8, 3}).select(1, 2) + column, dtype, sum);
    test::check_values<bool>(ta < tb, {8}, {false, false, false, true, true, false, false, true});
  }
}

TEST_CASE("bfloat16 matmul and sums accumulate in float32 and round once at the end") {
  // Integers whose products and sums are exact in float32 (the oracle needs no order) but not in
  // bfloat16 (8 significant bits): rounding after each step would give other values.
  const std::vector<float> a = {255.f, 1.f, 1.f, 1.f, 3.f, 5.f, 7.f, 9.f, 1.f, 2.f, 4.f, 8.f};    // [3, 4]
  const std::vector<float> b = {1.f, 2.f, 3.f, 1.f, 17.f, 1.f, 1.f, 19.f, 33.f, 1.f, 63.f, 1.f};  // [4, 3]
  const ts::Tensor ta = ts::from_values(a, {3, 4}).to(ts::kBFloat16);
  const ts::Tensor tb = ts::from_values(b, {4, 3}).to(ts::kBFloat16);
  std::vector<float> mm(9);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      float s = 0;
      for (int k = 0; k < 4; ++k) s += a[static_cast<size_t>(i * 4 + k)] * b[static_cast<size_t>(k * 3 + j)];
      mm[static_cast<size_t>(i * 3 + j)] = bf16(s);
    }
  check_exact(ts::mm(ta, tb), ts::kBFloat16, mm);
  check_exact(ts::matmul(ta, tb), ts::kBFloat16, mm);
  check_exact(ts::bmm(ta.unsqueeze(0), tb.unsqueeze(0)).squeeze(0), ts::kBFloat16, mm);
  // The sum of [255, 1 x 8] is 263, rounded once: 264 (PyTorch 2.15 gives 264 as well); rounded
  // per step it would stay at 256. The mean: 263 / 9 rounded once, 29.25 (PyTorch: 29.25).
  const ts::Tensor x = ts::tensor({255.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f}, ts::kBFloat16);
  check_exact(ts::sum(x), ts::kBFloat16, {264.f});
  check_exact(ts::mean(x), ts::kBFloat16, {bf16(263.f / 9.f)});
  CHECK(bf16(263.f / 9.f) == 29.25f);
  check_exact(ts::sum(ta, {1}), ts::kBFloat16, {bf16(258.f), bf16(24.f), bf16(15.f)});
  // softmax: the float32 softmax of the same values, rounded once.
  const ts::Tensor logits = ts::tensor({{0.5f, 1.f, -2.f}, {3.f, 3.f, 0.25f}}, ts::kBFloat16);
  const std::vector<float> reference = ts::softmax(logits.to(ts::kFloat32), 1).to_vector<float>();
  std::vector<float> want;
  for (float v : reference) want.push_back(bf16(v));
  check_exact(ts::softmax(logits, 1), ts::kBFloat16, want);
}

TEST_CASE("int8 and uint8 arithmetic wraps as PyTorch's, sums are int64") {
  const ts::Tensor i8 = ts::tensor({100, -128, 16, 127}, ts::kInt8);
  const ts::Tensor u8 = ts::tensor({200, 0, 16, 255}, ts::kUInt8);
  // PyTorch 2.15: int8 100 + 100 = -56, 16 * 16 = 0, -(-128) = -128, abs(-128) = -128;
  // uint8 200 + 100 = 44.
  ts::Tensor s = i8 + i8;
  CHECK(s.dtype() == ts::kInt8);
  test::check_values<int32_t>(s.to(ts::kInt32), {4}, {-56, 0, 32, -2});
  test::check_values<int32_t>((i8 * i8).to(ts::kInt32), {4}, {16, 0, 0, 1});
  test::check_values<int32_t>((-i8).to(ts::kInt32), {4}, {-100, -128, -16, -127});
  test::check_values<int32_t>(ts::abs(i8).to(ts::kInt32), {4}, {100, -128, 16, 127});
  test::check_values<int32_t>((u8 + ts::tensor({100, 1, 1, 1}, ts::kUInt8)).to(ts::kInt32), {4},
                              {44, 1, 17, 0});
  test::check_values<int32_t>((u8 - ts::tensor({201, 1, 0, 0}, ts::kUInt8)).to(ts::kInt32), {4},
                              {255, 255, 16, 255});
  test::check_values<int32_t>(ts::maximum(i8, ts::tensor({0, 0, 0, 0}, ts::kInt8)).to(ts::kInt32), {4},
                              {100, 0, 16, 127});
  const ts::Tensor total = ts::sum(i8);
  CHECK(total.dtype() == ts::kInt64);
  CHECK(total.item().to<int64_t>() == 115);
  CHECK(ts::sum(u8).item().to<int64_t>() == 471);
  test::check_values<bool>(u8 > ts::tensor({100, 100, 100, 100}, ts::kUInt8), {4},
                           {true, false, false, true});
  // A product of int8 matrices wraps like its elements: [[16, 16]] @ [[8], [8]] = 256 -> 0.
  ts::Tensor p = ts::mm(ts::tensor({{16, 16}}, ts::kInt8), ts::tensor({{8}, {8}}, ts::kInt8));
  CHECK(p.dtype() == ts::kInt8);
  CHECK(p.item().to<int64_t>() == 0);
}

TEST_CASE("autograd through bfloat16 ops gives bfloat16 gradients, each op's rounded once") {
  ts::Tensor x = ts::tensor({1.f, 3.f, 0.5f}, ts::kBFloat16).requires_grad_();
  ts::Tensor w = ts::tensor({257.f, 1.f, -2.f}).to(ts::kBFloat16);  // 257 is 256 in bfloat16
  ts::sum(x * w).backward();
  check_exact(x.grad(), ts::kBFloat16, {256.f, 1.f, -2.f});
  // Through a cast: the gradient comes back in the source's dtype.
  ts::Tensor y = ts::tensor({2.f, 4.f}).requires_grad_();
  ts::sum(y.to(ts::kBFloat16) * ts::tensor({1.f + 0x1p-7f, 3.f}, ts::kBFloat16)).backward();
  CHECK(y.grad().dtype() == ts::kFloat32);
  test::check_values<float>(y.grad(), {2}, {1.f + 0x1p-7f, 3.f});
}
