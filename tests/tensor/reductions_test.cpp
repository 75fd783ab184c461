#include "test_util.hpp"

namespace ts = tessera;

using test::iota;

TEST_CASE("sum over all dims, one dim, several dims, with keepdim") {
  ts::Tensor x = iota({2, 3, 4});         // x[i][j][k] = 12i + 4j + k
  CHECK(x.sum().item<float>() == 276.f);  // 0 + ... + 23
  CHECK(x.sum().dim() == 0);
  // over j: 3*(12i + k) + 4*(0+1+2)
  std::vector<float> over_j;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) over_j.push_back(float(3 * (12 * i + k) + 12));
  test::check_values<float>(ts::sum(x, {1}), {2, 4}, over_j);
  test::check_values<float>(ts::sum(x, {1}, true), {2, 1, 4}, over_j);
  // over i and k: sum_i sum_k (12i + 4j + k) = 4*12 + 8*4j... computed directly
  std::vector<float> over_ik(3, 0.f);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) over_ik[j] += float(12 * i + 4 * j + k);
  test::check_values<float>(ts::sum(x, {0, -1}), {3}, over_ik);
  test::check_values<float>(ts::sum(x, {0, 2}, true), {1, 3, 1}, over_ik);
  // Reducing a transposed view gives the same as reducing its contiguous copy.
  CHECK(ts::equal(ts::sum(x.transpose(0, 2), {1}), ts::sum(x.transpose(0, 2).contiguous(), {1})));
}

TEST_CASE("sum and prod of integers give int64 and of bool count") {
  ts::Tensor x = iota({4}, ts::kInt32) + 1;  // 1 2 3 4
  CHECK(ts::sum(x).dtype() == ts::kInt64);
  CHECK(ts::sum(x).item<int64_t>() == 10);
  CHECK(ts::prod(x).item<int64_t>() == 24);
  CHECK(ts::sum(ts::tensor({true, true, false})).item<int64_t>() == 2);
}

TEST_CASE("mean, max, min") {
  ts::Tensor x = ts::tensor({{1.0, 5.0, 3.0}, {-2.0, 0.0, 8.0}});
  test::check_values<double>(ts::mean(x, {1}), {2}, {3.0, 2.0});
  CHECK(x.mean().item<double>() == doctest::Approx(15.0 / 6));
  test::check_values<double>(ts::max(x, {0}), {3}, {1, 5, 8});
  test::check_values<double>(ts::min(x, {1}, true), {2, 1}, {1, -2});
  CHECK(x.max().item<double>() == 8.0);
  CHECK(x.min().item<double>() == -2.0);
  CHECK(std::isnan(ts::max(ts::tensor({1.f, NAN, 3.f})).item<float>()));
  CHECK_THROWS_WITH_AS(ts::mean(ts::tensor({1, 2})),
                       doctest::Contains("mean: input dtype int64 is not supported"), ts::Error);
}

TEST_CASE("argmax and argmin") {
  ts::Tensor x = ts::tensor({{1.f, 9.f, 3.f}, {7.f, 2.f, 7.f}});
  CHECK(ts::argmax(x).item<int64_t>() == 1);
  CHECK(ts::argmin(x).item<int64_t>() == 0);
  test::check_values<int64_t>(ts::argmax(x, 1), {2}, {1, 0});  // first of equal maxima
  test::check_values<int64_t>(ts::argmin(x, 0, true), {1, 3}, {0, 1, 0});
}

TEST_CASE("reductions over empty dims") {
  ts::Tensor e = ts::zeros({3, 0});
  test::check_values<float>(ts::sum(e, {1}), {3}, {0, 0, 0});
  test::check_values<float>(ts::prod(e, {1}), {3}, {1, 1, 1});
  CHECK(ts::sum(e, {0}).sizes() == ts::Shape{0});
  CHECK_THROWS_AS(ts::max(e, {1}), ts::Error);
}

TEST_CASE("all and any") {
  ts::Tensor b = ts::tensor({{true, false}, {true, true}});
  CHECK_FALSE(ts::all(b).item<bool>());
  CHECK(ts::any(b).item<bool>());
  test::check_values<bool>(ts::all(b, {1}), {2}, {false, true});
}

TEST_CASE("softmax and log_softmax") {
  ts::Tensor x = ts::tensor({{1.0, 2.0, 3.0}, {1000.0, 1000.0, 1000.0}});
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  test::check_values<double>(
      ts::softmax(x, 1), {2, 3},
      {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z, 1 / 3.0, 1 / 3.0, 1 / 3.0});
  test::check_values<double>(
      ts::log_softmax(x, -1), {2, 3},
      {1 - std::log(z), 2 - std::log(z), 3 - std::log(z), -std::log(3.0), -std::log(3.0), -std::log(3.0)});
  // Over dim 0 every column sums to one.
  test::check_values<double>(ts::sum(ts::softmax(x, 0), {0}), {3}, {1, 1, 1});
}

TEST_CASE("softmax of a 0-d tensor: dims 0 and -1 give 1 (log: 0), any other dim is out of range") {
  const ts::Tensor x = ts::sum(ts::tensor({2.5, -1.0}));
  REQUIRE(x.dim() == 0);
  test::check_values<double>(ts::softmax(x.to(ts::kFloat64), 0), {}, {1.0});
  test::check_values<double>(ts::log_softmax(x.to(ts::kFloat64), -1), {}, {0.0});
  CHECK_THROWS_WITH_AS(ts::softmax(x, 5),
                       doctest::Contains("softmax: dim 5 is out of range for a tensor of 0 dims"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::log_softmax(x, -2), doctest::Contains("log_softmax: dim -2 is out of range"),
                       ts::Error);
}
