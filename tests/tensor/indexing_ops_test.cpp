// gather, scatter_add, index_select, embedding and one_hot against hand-written loops, with their
// errors and edge cases (empty, 0-d, non-contiguous, local tensors).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "test_util.hpp"

namespace ts = tessera;

namespace {

std::vector<double> values_of(const ts::Tensor& t) {
  return t.to(ts::kFloat64).contiguous().to_vector<double>();
}

}  // namespace

TEST_CASE("gather along each dim matches a loop") {
  const ts::Tensor x = test::iota({3, 4}, ts::kFloat64) * 1.5;
  const std::vector<int64_t> idx0 = {2, 0, 1, 2, 0, 0, 1, 1};  // shape [2, 4], values < 3
  const ts::Tensor i0 = ts::from_values(idx0, {2, 4});
  std::vector<double> expected0;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 4; ++c) expected0.push_back(1.5 * static_cast<double>(idx0[r * 4 + c] * 4 + c));
  test::check_values(ts::gather(x, 0, i0), {2, 4}, expected0);

  const std::vector<int64_t> idx1 = {3, 3, 0, 1, 2, 1};  // shape [3, 2], values < 4
  const ts::Tensor i1 = ts::from_values(idx1, {3, 2}, ts::kInt32);
  std::vector<double> expected1;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 2; ++c) expected1.push_back(1.5 * static_cast<double>(r * 4 + idx1[r * 2 + c]));
  test::check_values(ts::gather(x, -1, i1), {3, 2}, expected1);
}

TEST_CASE("gather of a transposed input and a broadcast index") {
  const ts::Tensor x = test::iota({4, 3}, ts::kFloat32).t();  // [3, 4], x[r][c] = c * 3 + r
  const ts::Tensor index = ts::from_values(std::vector<int64_t>{1, 3}, {1, 2}).expand({3, 2});
  std::vector<float> expected;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c : {1, 3}) expected.push_back(static_cast<float>(c * 3 + r));
  test::check_values(ts::gather(x, 1, index), {3, 2}, expected);
}

TEST_CASE("gather: empty index, 0-d input, integer and bool dtypes") {
  const ts::Tensor x = test::iota({2, 3}, ts::kInt64);
  CHECK(ts::gather(x, 1, ts::zeros({2, 0}, ts::kInt64)).sizes() == ts::Shape{2, 0});
  test::check_values(ts::gather(ts::tensor(7.0), 0, ts::tensor(0L)), {}, std::vector<double>{7.0});
  test::check_values(ts::gather(x, 1, ts::tensor({{2L}, {1L}})), {2, 1}, std::vector<int64_t>{2, 4});
  const ts::Tensor b = ts::tensor({true, false, true});
  test::check_values(ts::gather(b, 0, ts::tensor({1L, 2L, 1L})), {3}, std::vector<bool>{false, true, false});
}

TEST_CASE("gather errors name the value and what was expected") {
  const ts::Tensor x = ts::zeros({3, 4});
  CHECK_THROWS_WITH_AS(ts::gather(x, 0, ts::tensor({{3L}})),
                       doctest::Contains("index 3 is out of range for dim 0 of size 3"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::gather(x, 0, ts::tensor({{-1L}})), doctest::Contains("index -1"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::gather(x, 0, ts::tensor({0L})), doctest::Contains("expected 2 as the input"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::gather(x, 0, ts::tensor({{0.5f}})), doctest::Contains("expected int64 or int32"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::gather(x, 2, ts::tensor({{0L}})), doctest::Contains("gather"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::gather(x, 0, ts::zeros({1, 5}, ts::kInt64)),
                       doctest::Contains("expected at most 4 in dim 1"), ts::Error);
}

TEST_CASE("scatter_add accumulates repeated indices in a loop's order") {
  const ts::Tensor x = test::iota({3, 2}, ts::kFloat64);
  const std::vector<int64_t> idx = {0, 2, 0, 0, 1, 0, 2, 2};  // [4, 2] along dim 0
  const ts::Tensor src = test::iota({4, 2}, ts::kFloat64) + 10.0;
  std::vector<double> expected = values_of(x);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 2; ++c) expected[static_cast<size_t>(idx[r * 2 + c] * 2 + c)] += 10.0 + r * 2 + c;
  test::check_values(ts::scatter_add(x, 0, ts::from_values(idx, {4, 2}), src), {3, 2}, expected);
  // x is unchanged (out of place).
  test::check_values(x, {3, 2}, std::vector<double>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("scatter_add with src larger than index uses index's part, int64, errors") {
  const ts::Tensor x = ts::zeros({2, 3}, ts::kInt64);
  const ts::Tensor src = test::iota({2, 4}, ts::kInt64);  // only [1, 2] of it is used
  const ts::Tensor index = ts::tensor({{2L, 2L}});
  test::check_values(ts::scatter_add(x, 1, index, src), {2, 3}, std::vector<int64_t>{0, 0, 1, 0, 0, 0});
  CHECK_THROWS_WITH_AS(ts::scatter_add(x, 1, index, src.to(ts::kFloat32)),
                       doctest::Contains("expected the input's dtype int64"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::scatter_add(x, 1, ts::tensor({{5L}}), src),
                       doctest::Contains("index 5 is out of range"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::scatter_add(x, 1, ts::zeros({1, 3}, ts::kInt64), ts::zeros({1, 2}, ts::kInt64)),
                       doctest::Contains("expected at least index's shape"), ts::Error);
}

TEST_CASE("index_select along each dim, 0-d and empty index") {
  const ts::Tensor x = test::iota({3, 4}, ts::kFloat32);
  const std::vector<int64_t> idx = {3, 0, 3};
  std::vector<float> expected;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c : idx) expected.push_back(static_cast<float>(r * 4 + c));
  test::check_values(ts::index_select(x, 1, ts::from_values(idx, {3})), {3, 3}, expected);
  test::check_values(ts::index_select(x, 0, ts::tensor({2, 2}, ts::kInt32)), {2, 4},
                     std::vector<float>{8, 9, 10, 11, 8, 9, 10, 11});
  CHECK(ts::index_select(x, 0, ts::zeros({0}, ts::kInt64)).sizes() == ts::Shape{0, 4});
  CHECK(ts::index_select(x, 0, ts::tensor(1L)).sizes() == ts::Shape{1, 4});
  CHECK_THROWS_WITH_AS(ts::index_select(x, 0, ts::zeros({1, 1}, ts::kInt64)),
                       doctest::Contains("expected a 1-d"), ts::Error);
}

TEST_CASE("embedding of any index shape, and its range error names the vocabulary size") {
  const ts::Tensor weight = test::iota({5, 3}, ts::kFloat32) * 0.5f;
  const std::vector<int64_t> idx = {4, 0, 4, 2, 1, 3};
  std::vector<float> expected;
  for (int64_t i : idx)
    for (int64_t e = 0; e < 3; ++e) expected.push_back(0.5f * static_cast<float>(i * 3 + e));
  test::check_values(ts::embedding(ts::from_values(idx, {2, 3}), weight), {2, 3, 3}, expected);
  test::check_values(ts::embedding(ts::from_values(idx, {6}, ts::kInt32), weight), {6, 3}, expected);
  CHECK(ts::embedding(ts::tensor(2L), weight).sizes() == ts::Shape{3});
  CHECK(ts::embedding(ts::zeros({2, 0}, ts::kInt64), weight).sizes() == ts::Shape{2, 0, 3});
  CHECK_THROWS_WITH_AS(ts::embedding(ts::tensor({1L, 5L}), weight),
                       doctest::Contains("index 5 is out of range for a vocabulary of 5 rows"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::embedding(ts::tensor({-2L}), weight), doctest::Contains("index -2"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::embedding(ts::tensor({1.0f}), weight),
                       doctest::Contains("expected int64 or int32"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::embedding(ts::tensor({1L}), ts::zeros({5})), doctest::Contains("expected 2 dims"),
                       ts::Error);
}

TEST_CASE("one_hot: inferred and given class counts, int64 result, errors") {
  const ts::Tensor idx = ts::tensor({{2L, 0L}, {1L, 2L}});
  const ts::Tensor inferred = ts::one_hot(idx);
  CHECK(inferred.dtype() == ts::kInt64);
  test::check_values(inferred, {2, 2, 3}, std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1});
  test::check_values(ts::one_hot(ts::tensor({1}, ts::kInt32), 4), {1, 4}, std::vector<int64_t>{0, 1, 0, 0});
  CHECK(ts::one_hot(ts::zeros({0}, ts::kInt64), 3).sizes() == ts::Shape{0, 3});
  CHECK_THROWS_WITH_AS(ts::one_hot(ts::zeros({0}, ts::kInt64)), doctest::Contains("pass num_classes"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::one_hot(idx, 2), doctest::Contains("index 2 is not below num_classes 2"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::one_hot(ts::tensor({-1L})), doctest::Contains("index -1 is negative"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::one_hot(idx, -3), doctest::Contains("num_classes is -3"), ts::Error);
}

TEST_CASE("gather and embedding on local tensors: each rank its own values") {
  const ts::Tensor weight = test::iota({4, 2}, ts::kFloat32);
  const ts::Tensor idx = ts::local_tensor({{0, ts::tensor({3L, 0L})}, {1, ts::tensor({1L})}});
  const ts::Tensor out = ts::embedding(idx, weight);
  REQUIRE(out.is_local());
  test::check_values(out.shard(0), {2, 2}, std::vector<float>{6, 7, 0, 1});
  test::check_values(out.shard(1), {1, 2}, std::vector<float>{2, 3});
  const ts::Tensor bad = ts::local_tensor({{0, ts::tensor({1L})}, {1, ts::tensor({4L})}});
  CHECK_THROWS_WITH_AS(ts::embedding(bad, weight),
                       doctest::Contains("index 4 is out of range for a vocabulary of 4"), ts::Error);
}

TEST_CASE("embedding's weight gradient sums repeated rows") {
  ts::Tensor weight = test::iota({4, 2}, ts::kFloat64);
  weight.requires_grad_();
  const ts::Tensor idx = ts::tensor({1L, 3L, 1L, 1L});
  ts::embedding(idx, weight).sum().backward();
  test::check_values(weight.grad(), {4, 2}, std::vector<double>{0, 0, 3, 3, 0, 0, 1, 1});
}
