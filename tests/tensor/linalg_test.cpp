#include "test_util.hpp"

namespace ts = tessera;

namespace {
// Reference product of row-major matrices.
template <class T>
std::vector<T> reference_mm(const std::vector<T>& a, const std::vector<T>& b, int64_t m, int64_t k,
                            int64_t n) {
  std::vector<T> c(static_cast<size_t>(m * n), T(0));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}
}  // namespace

TEST_CASE("mm of float32 and float64 matches a reference loop") {
  ts::Generator g(1);
  ts::Tensor a = ts::randn({5, 7}, g);
  ts::Tensor b = ts::randn({7, 3}, g);
  test::check_values<float>(ts::mm(a, b), {5, 3},
                            reference_mm(a.to_vector<float>(), b.to_vector<float>(), 5, 7, 3));
  ts::Tensor a64 = a.to(ts::kFloat64), b64 = b.to(ts::kFloat64);
  test::check_values<double>(ts::matmul(a64, b64), {5, 3},
                             reference_mm(a64.to_vector<double>(), b64.to_vector<double>(), 5, 7, 3));
}

TEST_CASE("mm accepts transposed and sliced operands") {
  ts::Generator g(2);
  ts::Tensor at = ts::randn({7, 5}, g);
  ts::Tensor b = ts::randn({3, 9}, g).slice(1, 0, 9, 3).t();  // [3,3] -> strided view ... then transposed
  ts::Tensor a = at.t();                                      // [5,7] with strides {1,5}
  ts::Tensor b2 = ts::randn({7, 3}, g);
  test::check_values<float>(ts::mm(a, b2), {5, 3},
                            reference_mm(a.contiguous().to_vector<float>(), b2.to_vector<float>(), 5, 7, 3));
  ts::Tensor sq = ts::randn({3, 3}, g);
  test::check_values<float>(ts::mm(sq, b), {3, 3},
                            reference_mm(sq.to_vector<float>(), b.contiguous().to_vector<float>(), 3, 3, 3));
}

TEST_CASE("integer mm is exact") {
  ts::Tensor a = ts::tensor({{1, 2}, {3, 4}});
  ts::Tensor b = ts::tensor({{5, 6}, {7, 8}});
  test::check_values<int64_t>(ts::mm(a, b), {2, 2}, {19, 22, 43, 50});
  test::check_values<int32_t>(ts::mm(a.to(ts::kInt32), b.to(ts::kInt32)), {2, 2}, {19, 22, 43, 50});
}

TEST_CASE("matmul follows torch.matmul's shape rules") {
  ts::Tensor v = ts::tensor({1.f, 2.f, 3.f});
  ts::Tensor m = ts::tensor({{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}});
  CHECK(ts::matmul(v, v).item<float>() == 14.f);
  CHECK(ts::matmul(v, v).dim() == 0);
  test::check_values<float>(ts::matmul(v, m), {2}, {4, 5});
  test::check_values<float>(ts::matmul(m.t(), v), {2}, {4, 5});
  // Batched: [2,2,3] x [3,2] and [2,2,3] x [2,3,2] and broadcasting [1,2,3] x [4,3,2].
  ts::Tensor batch = ts::arange(12).to(ts::kFloat32).reshape({2, 2, 3});
  ts::Tensor r = ts::matmul(batch, m);
  CHECK(r.sizes() == ts::Shape{2, 2, 2});
  for (int64_t i = 0; i < 2; ++i)
    test::check_values<float>(
        r[i], {2, 2}, reference_mm(batch[i].contiguous().to_vector<float>(), m.to_vector<float>(), 2, 3, 2));
  ts::Tensor rhs = ts::stack({m, m * 2});
  ts::Tensor rb = ts::matmul(batch, rhs);
  test::check_values<float>(
      rb[1], {2, 2},
      reference_mm(batch[1].contiguous().to_vector<float>(), (m * 2).to_vector<float>(), 2, 3, 2));
  ts::Tensor bc = ts::matmul(batch[0].unsqueeze(0), ts::stack({m, m, m, m}));
  CHECK(bc.sizes() == ts::Shape{4, 2, 2});
  CHECK(ts::matmul(v, batch.transpose(1, 2)).sizes() == ts::Shape{2, 2});
}

TEST_CASE("bmm") {
  ts::Generator g(3);
  ts::Tensor a = ts::randn({4, 2, 5}, g);
  ts::Tensor b = ts::randn({4, 5, 3}, g);
  ts::Tensor c = ts::bmm(a, b);
  for (int64_t i = 0; i < 4; ++i)
    test::check_values<float>(
        c[i], {2, 3},
        reference_mm(a[i].contiguous().to_vector<float>(), b[i].contiguous().to_vector<float>(), 2, 5, 3));
  CHECK_THROWS_WITH_AS(ts::bmm(a, ts::randn({3, 5, 3}, g)), doctest::Contains("batch sizes differ"),
                       ts::Error);
}

TEST_CASE("inner dimension mismatch and empty products") {
  CHECK_THROWS_WITH_AS(
      ts::matmul(ts::zeros({2, 3}), ts::zeros({4, 5})),
      doctest::Contains("inner dimensions do not match: a has shape [2, 3] and b has shape [4, 5] (3 != 4)"),
      ts::Error);
  CHECK_THROWS_WITH_AS(ts::mm(ts::zeros({2, 3, 1}), ts::zeros({1, 5})), doctest::Contains("expected two 2-d"),
                       ts::Error);
  test::check_values<float>(ts::mm(ts::ones({2, 0}), ts::ones({0, 3})), {2, 3}, std::vector<float>(6, 0.f));
  CHECK(ts::mm(ts::ones({0, 4}), ts::ones({4, 3})).sizes() == ts::Shape{0, 3});
}

// An empty inner dim is an empty sum, so every output element is 0 (torch gives zeros
// too), for every dtype, batched or not. The output is fresh memory that is never read, so a block
// the allocator hands out again (still holding 7s) shows an output that was left unwritten.
TEST_CASE("products with an empty inner dim are zeros") {
  for (const ts::DType dtype : {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64}) {
    CAPTURE(ts::dtype_name(dtype));
    { ts::Tensor dirty = ts::full({512, 1024}, 7, dtype); }  // >= 1 MiB: cached for reuse when freed
    const ts::Tensor c = ts::mm(ts::ones({512, 0}, dtype), ts::ones({0, 1024}, dtype));
    REQUIRE(c.sizes() == ts::Shape{512, 1024});
    CHECK(c.dtype() == dtype);
    CHECK(ts::equal(c, ts::zeros({512, 1024}, dtype)));
    test::check_values<double>(ts::mm(ts::ones({3, 0}, dtype), ts::ones({0, 4}, dtype)).to(ts::kFloat64),
                               {3, 4}, std::vector<double>(12, 0.0));
    test::check_values<double>(
        ts::bmm(ts::ones({2, 3, 0}, dtype), ts::ones({2, 0, 4}, dtype)).to(ts::kFloat64), {2, 3, 4},
        std::vector<double>(24, 0.0));
    // Broadcast batch dims, and vector . vector (a 0-d zero).
    test::check_values<double>(
        ts::matmul(ts::ones({2, 1, 3, 0}, dtype), ts::ones({5, 0, 4}, dtype)).to(ts::kFloat64), {2, 5, 3, 4},
        std::vector<double>(120, 0.0));
    const ts::Tensor dot = ts::matmul(ts::ones({0}, dtype), ts::ones({0}, dtype));
    CHECK(dot.dim() == 0);
    CHECK(dot.to(ts::kFloat64).item<double>() == 0.0);
    // Empty outputs stay empty, whatever k is.
    CHECK(ts::bmm(ts::ones({0, 3, 0}, dtype), ts::ones({0, 0, 4}, dtype)).sizes() == ts::Shape{0, 3, 4});
    CHECK(ts::mm(ts::ones({0, 0}, dtype), ts::ones({0, 4}, dtype)).sizes() == ts::Shape{0, 4});
  }
}
