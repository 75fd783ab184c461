#include "test_util.hpp"

namespace ts = tessera;

TEST_CASE("zeros, ones, full and empty have the requested shape, dtype and values") {
  test::check_values<float>(ts::zeros({2, 3}), {2, 3}, std::vector<float>(6, 0.f));
  test::check_values<double>(ts::ones({4}, ts::kFloat64), {4}, std::vector<double>(4, 1.0));
  CHECK(ts::ones({4}, ts::kFloat64).dtype() == ts::kFloat64);
  test::check_values<int64_t>(ts::full({2}, 7), {2}, {7, 7});
  CHECK(ts::full({2}, 7).dtype() == ts::kInt64);
  CHECK(ts::full({2}, 1.5).dtype() == ts::kFloat32);
  CHECK(ts::full({2}, true).dtype() == ts::kBool);
  CHECK(ts::empty({0, 5}).numel() == 0);
  CHECK(ts::zeros({}).dim() == 0);
  CHECK(ts::zeros({}).numel() == 1);
}

TEST_CASE("arange follows torch.arange, including negative and fractional steps") {
  test::check_values<int64_t>(ts::arange(5), {5}, {0, 1, 2, 3, 4});
  CHECK(ts::arange(5).dtype() == ts::kInt64);
  test::check_values<int64_t>(ts::arange(10, 0, -3), {4}, {10, 7, 4, 1});
  test::check_values<float>(ts::arange(0, 1, 0.25), {4}, {0.f, 0.25f, 0.5f, 0.75f});
  CHECK(ts::arange(0, 1, 0.25).dtype() == ts::kFloat32);
  CHECK(ts::arange(3, 3).numel() == 0);
  CHECK(ts::arange(5, 0).numel() == 0);
  test::check_values<double>(ts::arange(3, ts::kFloat64), {3}, {0.0, 1.0, 2.0});
  CHECK_THROWS_WITH_AS(ts::arange(0, 5, 0), doctest::Contains("step must be nonzero"), ts::Error);
}

TEST_CASE("eye") {
  test::check_values<float>(ts::eye(3), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  test::check_values<int64_t>(ts::eye(2, 3, ts::kInt64), {2, 3}, {1, 0, 0, 0, 1, 0});
}

TEST_CASE("tensor() from nested values, with Python's dtype rules") {
  ts::Tensor a = ts::tensor({{1.f, 2.f}, {3.f, 4.f}});
  CHECK(a.dtype() == ts::kFloat32);
  test::check_values<float>(a, {2, 2}, {1, 2, 3, 4});
  CHECK(ts::tensor({1, 2, 3}).dtype() == ts::kInt64);
  CHECK(ts::tensor({1.0, 2.0}).dtype() == ts::kFloat64);
  CHECK(ts::tensor({true, false}).dtype() == ts::kBool);
  test::check_values<int32_t>(ts::tensor({{{1, 2}}, {{3, 4}}}, ts::kInt32), {2, 1, 2}, {1, 2, 3, 4});
  CHECK_THROWS_WITH_AS(ts::tensor({{1, 2}, {3}}), doctest::Contains("ragged"), ts::Error);
}

TEST_CASE("rand and randn are reproducible from a seed and plausible") {
  ts::Generator g1(42), g2(42), g3(43);
  ts::Tensor a = ts::rand({1000}, g1);
  ts::Tensor b = ts::rand({1000}, g2);
  ts::Tensor c = ts::rand({1000}, g3);
  CHECK(ts::equal(a, b));
  CHECK_FALSE(ts::equal(a, c));
  // Drawing again continues the stream: different numbers.
  CHECK_FALSE(ts::equal(ts::rand({1000}, g1), a));
  const std::vector<float> values = a.to_vector<float>();
  double sum = 0;
  for (float v : values) {
    CHECK(v >= 0.f);
    CHECK(v < 1.f);
    sum += v;
  }
  CHECK(sum / 1000 == doctest::Approx(0.5).epsilon(0.05));

  ts::Generator gn(7);
  const std::vector<double> normal = ts::randn({20000}, gn, ts::kFloat64).to_vector<double>();
  double mean = 0, var = 0;
  for (double v : normal) mean += v;
  mean /= normal.size();
  for (double v : normal) var += (v - mean) * (v - mean);
  var /= normal.size();
  CHECK(std::abs(mean) < 0.03);
  CHECK(var == doctest::Approx(1.0).epsilon(0.05));

  ts::manual_seed(5);
  ts::Tensor d = ts::randn({3});
  ts::manual_seed(5);
  CHECK(ts::equal(ts::randn({3}), d));
  CHECK_THROWS_WITH_AS(ts::rand({2}, ts::kInt64), doctest::Contains("int64"), ts::Error);
}

TEST_CASE("a random tensor drawn in two parts equals one drawn at once") {
  ts::Generator whole(9), parts(9);
  std::vector<float> all = ts::rand({10}, whole).to_vector<float>();
  std::vector<float> first = ts::rand({4}, parts).to_vector<float>();
  std::vector<float> second = ts::rand({6}, parts).to_vector<float>();
  first.insert(first.end(), second.begin(), second.end());
  CHECK(all == first);
}

TEST_CASE("zeros_like and friends keep shape and dtype") {
  ts::Tensor x = ts::ones({2, 3}, ts::kInt32);
  ts::Tensor z = ts::zeros_like(x);
  CHECK(z.sizes() == ts::Shape{2, 3});
  CHECK(z.dtype() == ts::kInt32);
  test::check_values<int32_t>(ts::full_like(x, 4), {2, 3}, std::vector<int32_t>(6, 4));
  CHECK(ts::ones_like(x, ts::kFloat64).dtype() == ts::kFloat64);
}

TEST_CASE("zeros_like and friends make their tensor on the argument's backend unless told another") {
  // The default backend is cpu; a meta argument must give a meta result, a named backend wins.
  const ts::Tensor shapes = ts::empty({3, 7}, ts::TensorOptions(ts::kFloat64).backend("meta"));
  for (const ts::Tensor& made :
       {ts::empty_like(shapes), ts::zeros_like(shapes), ts::ones_like(shapes), ts::full_like(shapes, 2.5)}) {
    CHECK(made.backend() == "meta");
    CHECK(made.sizes() == ts::Shape{3, 7});
    CHECK(made.dtype() == ts::kFloat64);
  }
  const ts::Tensor on_cpu = ts::full_like(shapes, 2, ts::TensorOptions(ts::kInt32).backend("cpu"));
  CHECK(on_cpu.backend() == "cpu");
  test::check_values<int32_t>(on_cpu, {3, 7}, std::vector<int32_t>(21, 2));
  CHECK(ts::zeros_like(on_cpu, ts::TensorOptions().backend("meta")).backend() == "meta");
  CHECK_THROWS_WITH(ts::zeros_like(on_cpu, ts::TensorOptions().backend("no-such-backend")),
                    doctest::Contains("no-such-backend"));
}
