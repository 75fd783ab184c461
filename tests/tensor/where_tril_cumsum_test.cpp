// where, masked_fill, tril/triu and cumsum against hand-written loops.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "test_util.hpp"

namespace ts = tessera;

TEST_CASE("where broadcasts cond, a and b and promotes a with b") {
  const ts::Tensor cond = ts::tensor({{true}, {false}});                      // [2,1]
  const ts::Tensor a = ts::tensor({1, 2, 3});                                 // [3] int64
  const ts::Tensor b = ts::tensor({{10.f, 20.f, 30.f}, {40.f, 50.f, 60.f}});  // [2,3] float32
  const ts::Tensor out = ts::where(cond, a, b);
  CHECK(out.dtype() == ts::kFloat32);
  test::check_values<float>(out, {2, 3}, {1, 2, 3, 40, 50, 60});
  // Element-wise cond over a non-contiguous a.
  // A 0-d condition picks a whole side.
  test::check_values<float>(ts::where(ts::tensor(false), a, b), {2, 3}, {10, 20, 30, 40, 50, 60});
  const ts::Tensor m = test::iota({3, 2});  // a.t() is [2,3]
  const ts::Tensor c2 = ts::tensor({{true, false, true}, {false, true, false}});
  test::check_values<float>(ts::where(c2, m.t(), -1.f), {2, 3}, {0, -1, 4, -1, 3, -1});
}

TEST_CASE("where with scalars: dtype as PyTorch's result_type, and the unchosen NaN never leaks") {
  const ts::Tensor c = ts::tensor({true, false});
  const ts::Tensor i = ts::tensor({1, 2});
  CHECK(ts::where(c, i, 2.5).dtype() == ts::kFloat32);
  test::check_values<float>(ts::where(c, i, 2.5), {2}, {1.f, 2.5f});
  CHECK(ts::where(c, 7, i).dtype() == ts::kInt64);
  test::check_values<int64_t>(ts::where(c, 7, i), {2}, {7, 2});
  CHECK(ts::where(c, 1, 0).dtype() == ts::kInt64);
  CHECK(ts::where(c, 1.0, 0).dtype() == ts::kFloat32);
  test::check_values<float>(ts::where(c, 1.0, 0), {2}, {1.f, 0.f});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const ts::Tensor x = ts::from_values(std::vector<double>{nan, 3.0}, {2});
  const std::vector<double> got = ts::where(ts::tensor({false, true}), x, 0.0).to_vector<double>();
  CHECK(got == std::vector<double>{0.0, 3.0});
}

TEST_CASE("where: errors name what was wrong") {
  CHECK_THROWS_WITH_AS(ts::where(ts::tensor({1, 0}), ts::tensor({1.f, 2.f}), 0.f),
                       doctest::Contains("condition (mask) has dtype int64, expected bool"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::where(ts::tensor({true, false}), ts::zeros({3}), 0.f),
                       doctest::Contains("cannot be broadcast"), ts::Error);
}

TEST_CASE("masked_fill keeps the tensor's dtype and shape, the mask broadcasts to it") {
  const ts::Tensor x = ts::tensor({{1, 2, 3}, {4, 5, 6}});
  const ts::Tensor mask = ts::tensor({true, false, true});  // broadcast over rows
  const ts::Tensor out = ts::masked_fill(x, mask, 2.7);
  CHECK(out.dtype() == ts::kInt64);  // 2.7 cast to int64 as torch.masked_fill does
  test::check_values<int64_t>(out, {2, 3}, {2, 2, 2, 2, 5, 2});
  const ts::Tensor f = test::iota({2, 2});
  const float inf = -std::numeric_limits<float>::infinity();
  test::check_values<float>(ts::masked_fill(f, ts::tensor({{false, true}, {false, false}}), inf), {2, 2},
                            {0, inf, 2, 3});
  test::check_values<float>(
      ts::masked_fill(f, ts::tensor({{true, false}, {false, true}}), ts::scalar_tensor(9.0)), {2, 2},
      {9, 1, 2, 9});
  CHECK_THROWS_WITH_AS(ts::masked_fill(ts::zeros({3}), ts::tensor({{true}, {false}}), 1),
                       doctest::Contains("mask's shape [2, 1] does not broadcast to the tensor's shape [3]"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::masked_fill(f, ts::tensor({true, false}), ts::tensor({1.f})),
                       doctest::Contains("value must be a 0-d tensor, got 1 dims"), ts::Error);
}

namespace {

// The triangle by its definition: (i, j) is kept when j - i <= diagonal (lower) or >= (upper).
std::vector<float> triangle_loop(const std::vector<float>& v, int64_t batch, int64_t rows, int64_t cols,
                                 int64_t diagonal, bool lower) {
  std::vector<float> out(v.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const size_t k = static_cast<size_t>((b * rows + i) * cols + j);
        const bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
        out[k] = keep ? v[k] : 0.f;
      }
  return out;
}

}  // namespace

TEST_CASE("tril and triu over the last two dims, every diagonal, batched and non-contiguous") {
  const ts::Tensor x = test::iota({2, 3, 4}) + 1;
  const std::vector<float> v = x.to_vector<float>();
  for (int64_t d = -4; d <= 5; ++d) {
    CAPTURE(d);
    test::check_values<float>(ts::tril(x, d), {2, 3, 4}, triangle_loop(v, 2, 3, 4, d, true));
    test::check_values<float>(ts::triu(x, d), {2, 3, 4}, triangle_loop(v, 2, 3, 4, d, false));
  }
  // A transposed view: the loop runs over its contiguous copy.
  const ts::Tensor t = x.transpose(1, 2);  // [2,4,3]
  test::check_values<float>(ts::tril(t, 1), {2, 4, 3},
                            triangle_loop(t.contiguous().to_vector<float>(), 2, 4, 3, 1, true));
  CHECK(ts::tril(ts::ones({3, 3}, ts::kBool)).dtype() == ts::kBool);
  test::check_values<int64_t>(ts::triu(ts::ones({2, 2}, ts::kBool)).to(ts::kInt64), {2, 2}, {1, 1, 0, 1});
  CHECK(ts::tril(ts::zeros({0, 3})).sizes() == ts::Shape{0, 3});
  CHECK_THROWS_WITH_AS(ts::tril(ts::zeros({3})),
                       doctest::Contains("tril: the input has 1 dims (shape [3]), expected at least 2"),
                       ts::Error);
}

TEST_CASE("cumsum along each dim, integer inputs give int64") {
  const ts::Tensor x = test::iota({2, 3}) + 1;  // [[1,2,3],[4,5,6]]
  test::check_values<float>(ts::cumsum(x, 1), {2, 3}, {1, 3, 6, 4, 9, 15});
  test::check_values<float>(ts::cumsum(x, -1), {2, 3}, {1, 3, 6, 4, 9, 15});
  test::check_values<float>(ts::cumsum(x, 0), {2, 3}, {1, 2, 3, 5, 7, 9});
  test::check_values<float>(ts::cumsum(x.t(), 1), {3, 2}, {1, 5, 2, 7, 3, 9});
  const ts::Tensor i = ts::cumsum(ts::tensor({1, 2, 3}, ts::kInt32), 0);
  CHECK(i.dtype() == ts::kInt64);
  test::check_values<int64_t>(i, {3}, {1, 3, 6});
  test::check_values<int64_t>(ts::cumsum(ts::tensor({true, false, true}), 0), {3}, {1, 1, 2});
  // Past int32's range: the sum is in int64.
  test::check_values<int64_t>(ts::cumsum(ts::tensor({2000000000, 2000000000}, ts::kInt32), 0), {2},
                              {2000000000, 4000000000});
  const ts::Tensor s = ts::cumsum(ts::scalar_tensor(2.5), 0);
  CHECK(s.dim() == 0);
  CHECK(s.item<float>() == 2.5f);
  CHECK(ts::cumsum(ts::zeros({0, 2}), 0).sizes() == ts::Shape{0, 2});
  CHECK_THROWS_WITH_AS(ts::cumsum(x, 2), doctest::Contains("dim 2 is out of range for a tensor of 2 dims"),
                       ts::Error);
}
