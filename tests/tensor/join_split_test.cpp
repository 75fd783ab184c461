#include "test_util.hpp"

namespace ts = tessera;

TEST_CASE("cat along dims, with promotion") {
  ts::Tensor a = ts::tensor({{1.f, 2.f}});
  ts::Tensor b = ts::tensor({{3.f, 4.f}, {5.f, 6.f}});
  test::check_values<float>(ts::cat({a, b}), {3, 2}, {1, 2, 3, 4, 5, 6});
  test::check_values<float>(ts::cat({b.t(), b.t()}, 1), {2, 4}, {3, 5, 3, 5, 4, 6, 4, 6});
  CHECK(ts::cat({ts::tensor({1}), ts::tensor({2.5})}).dtype() == ts::kFloat64);
  CHECK_THROWS_WITH_AS(ts::cat({a, ts::zeros({1, 3})}), doctest::Contains("does not match"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::cat(std::vector<ts::Tensor>{}), doctest::Contains("non-empty"), ts::Error);
}

TEST_CASE("stack adds a dim") {
  ts::Tensor a = ts::tensor({1, 2});
  ts::Tensor b = ts::tensor({3, 4});
  test::check_values<int64_t>(ts::stack({a, b}), {2, 2}, {1, 2, 3, 4});
  test::check_values<int64_t>(ts::stack({a, b}, 1), {2, 2}, {1, 3, 2, 4});
  CHECK_THROWS_WITH_AS(ts::stack({a, ts::tensor({1})}), doctest::Contains("stack: tensor 1 has shape [1]"),
                       ts::Error);
}

TEST_CASE("split and chunk use torch's piece sizes") {
  ts::Tensor x = ts::arange(10);
  std::vector<ts::Tensor> parts = ts::split(x, 4);
  REQUIRE(parts.size() == 3);
  test::check_values<int64_t>(parts[2], {2}, {8, 9});
  std::vector<ts::Tensor> chunks = ts::chunk(x, 4);  // ceil(10/4) = 3: 3,3,3,1
  REQUIRE(chunks.size() == 4);
  CHECK(chunks[3].numel() == 1);
  CHECK(ts::chunk(ts::arange(2), 4).size() == 2);  // torch.chunk returns fewer pieces
  std::vector<ts::Tensor> uneven = ts::split(x, std::vector<int64_t>{1, 0, 9});
  CHECK(uneven[1].numel() == 0);
  test::check_values<int64_t>(uneven[0], {1}, {0});
  CHECK_THROWS_WITH_AS(ts::split(x, std::vector<int64_t>{3, 3}),
                       doctest::Contains("sum to 6, but dim 0 has size 10"), ts::Error);
  // Pieces are views: writing into one writes into x.
  parts[0].fill_(-1);
  CHECK(x.to_vector<int64_t>()[3] == -1);
}

TEST_CASE("printing is readable") {
  CHECK(ts::tensor({{1.f, 2.f}, {3.f, 4.f}}).to_string() == "tensor([[1., 2.],\n        [3., 4.]])");
  CHECK(ts::tensor({1, 2, 3}).to_string() == "tensor([1, 2, 3])");
  CHECK(ts::tensor({1.5, 2.0}).to_string() == "tensor([1.5000, 2.0000], dtype=float64)");
  CHECK(ts::tensor({true, false}).to_string() == "tensor([ True, False])");
  CHECK(ts::zeros({0}).to_string() == "tensor([], size=[0])");
  CHECK(ts::scalar_tensor(3).to_string() == "tensor(3)");
}

TEST_CASE("split with split_size 0: one empty piece of an empty dim, an error for any other") {
  const ts::Tensor empty = ts::zeros({2, 0});
  const std::vector<ts::Tensor> pieces = ts::split(empty, 0, 1);
  REQUIRE(pieces.size() == 1);
  CHECK(pieces[0].sizes() == ts::Shape{2, 0});
  CHECK_THROWS_WITH_AS(
      ts::split(ts::zeros({2, 3}), 0, 1),
      doctest::Contains("split_size must be positive (or 0 for an empty dim), got 0 for dim 1 of size 3"),
      ts::Error);
  CHECK_THROWS_WITH_AS(ts::split(empty, -1, 1), doctest::Contains("got -1 for dim 1 of size 0"), ts::Error);
}
