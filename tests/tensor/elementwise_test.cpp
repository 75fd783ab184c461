#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "test_util.hpp"

namespace ts = tessera;

TEST_CASE("binary ops broadcast like NumPy") {
  ts::Tensor a = ts::tensor({{1.f}, {2.f}});      // [2,1]
  ts::Tensor b = ts::tensor({10.f, 20.f, 30.f});  // [3]
  test::check_values<float>(a + b, {2, 3}, {11, 21, 31, 12, 22, 32});
  test::check_values<float>(b - a, {2, 3}, {9, 19, 29, 8, 18, 28});
  test::check_values<float>(a * b, {2, 3}, {10, 20, 30, 20, 40, 60});
  test::check_values<float>(b / a, {2, 3}, {10, 20, 30, 5, 10, 15});
  test::check_values<float>(ts::maximum(a * 15, b), {2, 3}, {15, 20, 30, 30, 30, 30});
  test::check_values<float>(ts::minimum(a * 15, b), {2, 3}, {10, 15, 15, 10, 20, 30});
  test::check_values<float>(ts::pow(a, 2), {2, 1}, {1, 4});
  CHECK_THROWS_WITH_AS(ts::zeros({2, 3}) + ts::zeros({4}),
                       doctest::Contains("shapes [2, 3] and [4] cannot be broadcast"), ts::Error);
}

TEST_CASE("broadcast rows, broadcast columns and transposed operands, on both sides") {
  // m[i][j] = 10 i + j; row = [100, 200, 300]; col = [[1000], [2000]]: every element distinct.
  const ts::Tensor m = ts::tensor({{0.f, 1.f, 2.f}, {10.f, 11.f, 12.f}});  // [2,3]
  const ts::Tensor row = ts::tensor({100.f, 200.f, 300.f});                // [3], a row for each row of m
  const ts::Tensor col = ts::tensor({{1000.f}, {2000.f}});                 // [2,1], one value per row
  test::check_values<float>(m - row, {2, 3}, {-100, -199, -298, -90, -189, -288});
  test::check_values<float>(row - m, {2, 3}, {100, 199, 298, 90, 189, 288});
  test::check_values<float>(m - col, {2, 3}, {-1000, -999, -998, -1990, -1989, -1988});
  test::check_values<float>(col - m, {2, 3}, {1000, 999, 998, 1990, 1989, 1988});
  // m.t() is [3,2] with unit stride down its columns: no row of it is contiguous.
  const ts::Tensor mt = m.t();
  test::check_values<float>(mt - ts::tensor({{1.f, 2.f}}), {3, 2}, {-1, 8, 0, 9, 1, 10});
  test::check_values<float>(mt * ts::tensor({{2.f, 3.f}, {4.f, 5.f}, {6.f, 7.f}}), {3, 2},
                            {0, 30, 4, 55, 12, 84});
}

TEST_CASE("scalar operands on either side") {
  ts::Tensor x = ts::tensor({1.f, 2.f, 3.f});
  test::check_values<float>(x * 2, {3}, {2, 4, 6});
  test::check_values<float>(x + 10, {3}, {11, 12, 13});
  test::check_values<float>(1 - x, {3}, {0, -1, -2});
  test::check_values<float>(6 / x, {3}, {6, 3, 2});
  test::check_values<float>(ts::pow(2, x), {3}, {2, 4, 8});
  test::check_values<float>(-x, {3}, {-1, -2, -3});
}

TEST_CASE("comparisons give bool tensors") {
  ts::Tensor x = ts::tensor({1, 2, 3});
  ts::Tensor y = ts::tensor({3, 2, 1});
  test::check_values<bool>(x < y, {3}, {true, false, false});
  test::check_values<bool>(x <= y, {3}, {true, true, false});
  test::check_values<bool>(x == y, {3}, {false, true, false});
  test::check_values<bool>(x != y, {3}, {true, false, true});
  test::check_values<bool>(x > 1, {3}, {false, true, true});
  test::check_values<bool>(ts::ge(x, 2.5), {3}, {false, false, true});
  CHECK((x < y).dtype() == ts::kBool);
}

TEST_CASE("type promotion follows PyTorch") {
  ts::Tensor i32 = ts::ones({2}, ts::kInt32);
  ts::Tensor i64 = ts::ones({2}, ts::kInt64);
  ts::Tensor f32 = ts::ones({2}, ts::kFloat32);
  ts::Tensor f64 = ts::ones({2}, ts::kFloat64);
  ts::Tensor b = ts::ones({2}, ts::kBool);
  CHECK((i32 + i64).dtype() == ts::kInt64);
  CHECK((i64 + f32).dtype() == ts::kFloat32);
  CHECK((f32 + f64).dtype() == ts::kFloat64);
  CHECK((b + i32).dtype() == ts::kInt32);
  CHECK((b + b).dtype() == ts::kBool);
  // Scalars: an int keeps the tensor's type, a float makes integers float32.
  CHECK((i32 + 1).dtype() == ts::kInt32);
  CHECK((i32 + 1.5).dtype() == ts::kFloat32);
  CHECK((f64 + 1.5).dtype() == ts::kFloat64);
  CHECK((b + 1).dtype() == ts::kInt64);
  // 0-d tensors count only when they raise the category.
  CHECK((i32 + ts::scalar_tensor(5)).dtype() == ts::kInt32);
  CHECK((f32 + ts::scalar_tensor(2.0, ts::kFloat64)).dtype() == ts::kFloat32);
  CHECK((i32 + ts::scalar_tensor(2.0, ts::kFloat64)).dtype() == ts::kFloat64);
  // True division of integers is float32.
  ts::Tensor q = ts::tensor({1, 3}) / 2;
  CHECK(q.dtype() == ts::kFloat32);
  test::check_values<float>(q, {2}, {0.5f, 1.5f});
  // Mixed values really are computed in the promoted type.
  test::check_values<double>(ts::tensor({1, 2}, ts::kInt32) + ts::tensor({0.5, 0.25}), {2}, {1.5, 2.25});
}

TEST_CASE("integer arithmetic is exact") {
  ts::Tensor big = ts::tensor({int64_t{1} << 60, int64_t{3}});
  test::check_values<int64_t>(big + 1, {2}, {(int64_t{1} << 60) + 1, 4});
  test::check_values<int64_t>(ts::pow(ts::tensor({3, -2}), 3), {2}, {27, -8});
  CHECK_THROWS_WITH_AS(ts::pow(ts::tensor({2}), -1), doctest::Contains("negative"), ts::Error);
}

TEST_CASE("unary ops match the C library") {
  const std::vector<double> xs = {-2.0, -0.5, 0.0, 0.5, 3.0};
  ts::Tensor x = ts::tensor({-2.0, -0.5, 0.0, 0.5, 3.0});
  std::vector<double> e_abs, e_exp, e_relu, e_tanh, e_sig, e_gelu;
  for (double v : xs) {
    e_abs.push_back(std::fabs(v));
    e_exp.push_back(std::exp(v));
    e_relu.push_back(v > 0 ? v : 0);
    e_tanh.push_back(std::tanh(v));
    e_sig.push_back(1 / (1 + std::exp(-v)));
    e_gelu.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
  }
  test::check_values<double>(ts::abs(x), {5}, e_abs);
  test::check_values<double>(ts::exp(x), {5}, e_exp);
  test::check_values<double>(ts::relu(x), {5}, e_relu);
  test::check_values<double>(ts::tanh(x), {5}, e_tanh);
  test::check_values<double>(ts::sigmoid(x), {5}, e_sig);
  test::check_values<double>(ts::gelu(x), {5}, e_gelu);
  test::check_values<float>(ts::sqrt(ts::tensor({4, 9})), {2}, {2, 3});  // int -> float32
  CHECK(ts::sqrt(ts::tensor({4, 9})).dtype() == ts::kFloat32);
  test::check_values<float>(ts::log(ts::tensor({1.f, 0.f})), {2}, {0.f, -INFINITY});
  test::check_values<int64_t>(ts::relu(ts::tensor({-3, 4})), {2}, {0, 4});
}

TEST_CASE("an op without a kernel for the dtype names op, dtype and backend") {
  ts::Tensor b = ts::tensor({true, false});
  CHECK_THROWS_WITH_AS(b - b, doctest::Contains("op 'sub' has no kernel for dtype bool on backend 'cpu'"),
                       ts::Error);
}

TEST_CASE("to(dtype) converts values") {
  test::check_values<int32_t>(ts::tensor({1.7f, -1.7f, 0.f}).to(ts::kInt32), {3}, {1, -1, 0});
  test::check_values<bool>(ts::tensor({2, 0, -1}).to(ts::kBool), {3}, {true, false, true});
  test::check_values<double>(ts::tensor({true, false}).to(ts::kFloat64), {2}, {1, 0});
  ts::Tensor x = ts::zeros({2});
  CHECK(x.to(ts::kFloat32).impl() == x.impl());  // same dtype: the same tensor
}

TEST_CASE("clone is a deep copy and copy_ casts and broadcasts") {
  ts::Tensor x = ts::tensor({1.f, 2.f});
  ts::Tensor c = x.clone();
  c.fill_(9);
  test::check_values<float>(x, {2}, {1, 2});
  ts::Tensor dst = ts::zeros({2, 2}, ts::kFloat64);
  dst.copy_(ts::tensor({3, 4}));
  test::check_values<double>(dst, {2, 2}, {3, 4, 3, 4});
  CHECK_THROWS_WITH_AS(dst.copy_(ts::zeros({3})), doctest::Contains("cannot be broadcast"), ts::Error);
}

TEST_CASE("equal and allclose") {
  ts::Tensor a = ts::tensor({1.f, 2.f});
  CHECK(ts::equal(a, ts::tensor({1.f, 2.f})));
  CHECK_FALSE(ts::equal(a, ts::tensor({1.f, 2.5f})));
  CHECK_FALSE(ts::equal(a, ts::tensor({1.f, 2.f, 3.f})));
  CHECK(ts::allclose(a, a + 1e-7f));
  CHECK_FALSE(ts::allclose(a, a + 1e-3f));
  CHECK(ts::allclose(a, a + 1e-3f, 1e-2, 0.0));
  CHECK(ts::allclose(ts::tensor({INFINITY}), ts::tensor({INFINITY})));
  CHECK_FALSE(ts::allclose(ts::tensor({NAN}), ts::tensor({NAN})));
}

TEST_CASE("item and to_vector") {
  CHECK(ts::tensor({2.5f}).item<float>() == 2.5f);
  CHECK(ts::scalar_tensor(7).item<int64_t>() == 7);
  CHECK(ts::full({}, true).item<bool>());
  CHECK_THROWS_WITH_AS(ts::zeros({2}).item(), doctest::Contains("has 2 elements"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::Tensor().dim(), doctest::Contains("undefined"), ts::Error);
}

TEST_CASE("a float scalar that does not fit an integer tensor is an error") {
  ts::Tensor i = ts::zeros({2}, ts::kInt64);
  CHECK_THROWS_WITH_AS(i.fill_(NAN), doctest::Contains("cannot be converted to an integer"), ts::Error);
  CHECK_THROWS_WITH_AS(i.fill_(1e30), doctest::Contains("cannot be converted to an integer"), ts::Error);
  i.fill_(2.9);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{2, 2});
}

namespace {

template <class T>
auto bits_of(T x) {
  std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t> bits;
  std::memcpy(&bits, &x, sizeof(T));
  return bits;
}

// Every element of `t` as bits.
template <class T>
std::vector<uint64_t> all_bits(const ts::Tensor& t) {
  std::vector<uint64_t> out;
  for (T x : t.contiguous().to_vector<T>()) out.push_back(bits_of(x));
  return out;
}

template <class T>
void check_settled_nans() {
  const uint64_t quiet = sizeof(T) == 4 ? 0x7fc00000u : 0x7ff8000000000000ull;
  const T one_payload = sizeof(T) == 4 ? T(std::nanf("1")) : T(std::nan("1"));
  const T other_payload = -(sizeof(T) == 4 ? T(std::nanf("2")) : T(std::nan("2")));  // and the sign bit
  const T inf = std::numeric_limits<T>::infinity();
  const ts::DType dtype = sizeof(T) == 4 ? ts::kFloat32 : ts::kFloat64;
  // 1 element (a scalar loop), 37 (vector body and tail), and strided views of them.
  for (const int64_t n : {int64_t{1}, int64_t{37}}) {
    CAPTURE(n);
    const ts::Tensor a =
        ts::full({n}, 0.0, dtype) + ts::from_values(std::vector<T>(n, one_payload), {n}, dtype);
    const ts::Tensor b = ts::from_values(std::vector<T>(n, other_payload), {n}, dtype);
    const ts::Tensor infs = ts::full({n}, static_cast<double>(inf), dtype);
    const std::vector<uint64_t> expected(static_cast<size_t>(n), quiet);
    for (const ts::Tensor& result :
         {a + b, b + a, a - b, b * a, a / b, infs - infs, infs * ts::zeros({n}, dtype),
          ts::zeros({n}, dtype) / ts::zeros({n}, dtype)})
      CHECK(all_bits<T>(result) == expected);
    const ts::Tensor wide_a = ts::stack({a, a}, 1), wide_b = ts::stack({b, b}, 1);  // [n, 2]
    CHECK(all_bits<T>(wide_a.select(1, 1) + wide_b.select(1, 0)) == expected);      // strided operands
  }
  // A sum of NaNs folds through the same arithmetic.
  const ts::Tensor two = ts::from_values(std::vector<T>{one_payload, other_payload}, {2}, dtype);
  CHECK(all_bits<T>(two.sum()) == std::vector<uint64_t>{quiet});
}

}  // namespace

// IEEE 754 leaves open which NaN an operation on NaNs returns; hardware keeps one operand's payload
// and sign, and which one the compiler passes first may change from one loop of a kernel to the
// next. Tessera's kernels settle every NaN result on the positive quiet NaN, so a value computed in
// two ways (a collective replayed and evaluated, on two machines) has one bit pattern.
TEST_CASE("a NaN result of add, sub, mul, div and sum is the positive quiet NaN, whatever NaNs went in") {
  check_settled_nans<float>();
  check_settled_nans<double>();
}
