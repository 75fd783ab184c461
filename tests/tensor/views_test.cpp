#include "test_util.hpp"

namespace ts = tessera;

using test::iota;

TEST_CASE("transpose and permute are views with swapped strides") {
  ts::Tensor x = iota({2, 3});
  ts::Tensor t = x.transpose(0, 1);
  CHECK(t.sizes() == ts::Shape{3, 2});
  CHECK(t.strides() == std::vector<int64_t>{1, 3});
  CHECK_FALSE(t.is_contiguous());
  test::check_values<float>(t, {3, 2}, {0, 3, 1, 4, 2, 5});
  test::check_values<float>(x.t().contiguous(), {3, 2}, {0, 3, 1, 4, 2, 5});
  ts::Tensor p = iota({2, 3, 4}).permute({2, 0, 1});
  CHECK(p.sizes() == ts::Shape{4, 2, 3});
  // p[i][j][k] = x[j][k][i] = j*12 + k*4 + i
  std::vector<float> expected;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(float(j * 12 + k * 4 + i));
  test::check_values<float>(p, {4, 2, 3}, expected);
  CHECK_THROWS_WITH_AS(x.permute({0, 0}), doctest::Contains("appears twice"), ts::Error);
}

TEST_CASE("views share storage with their base") {
  ts::Tensor x = ts::zeros({2, 3});
  x.transpose(0, 1).select(0, 1).fill_(5);  // column 1
  test::check_values<float>(x, {2, 3}, {0, 5, 0, 0, 5, 0});
  x.narrow(1, 2, 1).copy_(ts::tensor({{7.f}, {8.f}}));
  test::check_values<float>(x, {2, 3}, {0, 5, 7, 0, 5, 8});
}

TEST_CASE("reshape, view and flatten") {
  ts::Tensor x = iota({2, 3, 4});
  test::check_values<float>(x.view({6, -1}).select(0, 5), {4}, {20, 21, 22, 23});
  CHECK(x.flatten().sizes() == ts::Shape{24});
  CHECK(x.flatten(1).sizes() == ts::Shape{2, 12});
  CHECK(x.flatten(0, 1).sizes() == ts::Shape{6, 4});
  // A transposed tensor cannot be viewed flat, but it can be reshaped (with a copy).
  ts::Tensor t = iota({2, 3}).t();
  CHECK_THROWS_WITH_AS(t.view({6}), doctest::Contains("without a copy"), ts::Error);
  test::check_values<float>(t.reshape({6}), {6}, {0, 3, 1, 4, 2, 5});
  CHECK_THROWS_WITH_AS(x.reshape({5, 5}), doctest::Contains("invalid for a tensor of 24 elements"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(x.reshape({-1, -1}), doctest::Contains("only one dim may be -1"), ts::Error);
  CHECK(ts::zeros({0, 3}).reshape({3, 0, 5}).numel() == 0);
}

TEST_CASE("squeeze and unsqueeze") {
  ts::Tensor x = ts::zeros({1, 3, 1, 2});
  CHECK(x.squeeze().sizes() == ts::Shape{3, 2});
  CHECK(x.squeeze(2).sizes() == ts::Shape{1, 3, 2});
  CHECK(x.squeeze(1).sizes() == ts::Shape{1, 3, 1, 2});
  CHECK(x.unsqueeze(0).sizes() == ts::Shape{1, 1, 3, 1, 2});
  CHECK(x.unsqueeze(-1).sizes() == ts::Shape{1, 3, 1, 2, 1});
  CHECK_THROWS_WITH_AS(x.unsqueeze(6), doctest::Contains("dim 6 is out of range"), ts::Error);
}

TEST_CASE("narrow, slice and select") {
  ts::Tensor x = iota({10});
  test::check_values<float>(x.narrow(0, 2, 3), {3}, {2, 3, 4});
  test::check_values<float>(x.slice(0, 1, 8, 3), {3}, {1, 4, 7});
  test::check_values<float>(x.slice(0, -3, 100), {3}, {7, 8, 9});
  CHECK(x.slice(0, 5, 2).numel() == 0);
  test::check_values<float>(iota({3, 4})[1], {4}, {4, 5, 6, 7});
  test::check_values<float>(iota({3, 4}).select(1, -1), {3}, {3, 7, 11});
  CHECK_THROWS_WITH_AS(x.narrow(0, 8, 3), doctest::Contains("do not fit dim 0 of size 10"), ts::Error);
  CHECK_THROWS_WITH_AS(x.select(0, 10), doctest::Contains("index 10 is out of range"), ts::Error);
  CHECK_THROWS_WITH_AS(x.slice(0, 0, 5, 0), doctest::Contains("step must be positive"), ts::Error);
}

TEST_CASE("flip reverses dims through negative strides") {
  ts::Tensor x = iota({2, 3});
  test::check_values<float>(x.flip({1}), {2, 3}, {2, 1, 0, 5, 4, 3});
  test::check_values<float>(x.flip({0, 1}), {2, 3}, {5, 4, 3, 2, 1, 0});
  test::check_values<float>(x.flip({0}).contiguous(), {2, 3}, {3, 4, 5, 0, 1, 2});
  // Computing on flipped views works too.
  test::check_values<float>(x.flip({1}) + x, {2, 3}, {2, 2, 2, 8, 8, 8});
}

TEST_CASE("expand broadcasts with stride 0") {
  ts::Tensor x = ts::tensor({1.f, 2.f, 3.f});
  ts::Tensor e = x.expand({2, 3});
  CHECK(e.strides() == std::vector<int64_t>{0, 1});
  test::check_values<float>(e.contiguous(), {2, 3}, {1, 2, 3, 1, 2, 3});
  CHECK_THROWS_WITH_AS(x.expand({2, 4}), doctest::Contains("cannot be expanded"), ts::Error);
}

TEST_CASE("dim out of range is a clear error") {
  ts::Tensor x = ts::zeros({2, 3});
  CHECK_THROWS_WITH_AS(x.transpose(0, 2), doctest::Contains("dim 2 is out of range for a tensor of 2 dims"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(x.size(-3), doctest::Contains("dim -3 is out of range"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::sum(x, {5}), doctest::Contains("dim 5 is out of range"), ts::Error);
}

TEST_CASE("copy_ between overlapping views of one tensor") {
  ts::Tensor a = ts::arange(5);
  a.slice(0, 1, 5).copy_(a.slice(0, 0, 4));  // a[1:] = a[:-1]
  test::check_values<int64_t>(a, {5}, {0, 0, 1, 2, 3});
}

TEST_CASE("more than the maximum number of dims is an error") {
  ts::Tensor x = ts::zeros(ts::Shape(16, 1));
  CHECK_THROWS_WITH_AS(x.unsqueeze(0), doctest::Contains("at most 16 dims"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::zeros(ts::Shape(17, 1)), doctest::Contains("at most 16 dims"), ts::Error);
}
