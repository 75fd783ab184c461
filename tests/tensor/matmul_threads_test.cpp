// Float products give the same bits for every kernel thread count (docs/design.md, "Same bits by design"):
// the CPU backend cuts a large product into panels whose layout depends only on (m, n, k) and runs each as
// one chain of fused multiply-adds per element, so the thread count decides only who computes a panel. The
// products here are large enough to be cut into several panels (plan_panels in
// plugins/backend-cpu/linalg.cpp: 512 x 512 panels once m*n*k reaches 2^22), with sizes that are not
// multiples of 512 and inputs that are distinct non-integers, so that any change in the order of a sum would
// show in the bits.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernel_threads.hpp"
#include "test_util.hpp"
#include "same_bits.hpp"

namespace ts = tessera;

namespace {

using test::KernelThreads;

template <class T>
bool same_bits(const ts::Tensor& x, const ts::Tensor& y) {
  return x.sizes() == y.sizes() && test::same_bits(x.to_vector<T>(), y.to_vector<T>());
}

// Runs `product` with 1 kernel thread and then with 2, 3, 7 and the default; every result must have
// the bits of the first, which is returned.
template <class T, class Product>
ts::Tensor same_bits_for_every_thread_count(const Product& product) {
  ts::Tensor first;
  {
    KernelThreads one(1);
    first = product();
  }
  for (int count : {2, 3, 7, 0}) {
    KernelThreads threads(count);
    CAPTURE(count);
    CHECK(same_bits<T>(product(), first));
  }
  return first;
}

// `c` = `a` @ `b` (2-d, any layout) against a double-precision sum on every 7th row (and the last):
// each element within 2 k eps sum_p |a_ip b_pj|, the rounding bound of a length-k dot product in T
// (the reference's own error in double is far inside it).
template <class T>
void check_against_reference(const ts::Tensor& a, const ts::Tensor& b, const ts::Tensor& c) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  REQUIRE(c.sizes() == ts::Shape{m, n});
  const std::vector<double> av = a.to(ts::kFloat64).to_vector<double>();
  const std::vector<double> bv = b.to(ts::kFloat64).to_vector<double>();
  const std::vector<T> cv = c.to_vector<T>();
  const double eps = std::numeric_limits<T>::epsilon();
  int64_t outside = 0, checked = 0;
  for (int64_t i = 0; i < m; i = (i + 7 < m || i == m - 1) ? i + 7 : m - 1) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double term = av[static_cast<size_t>(i * k + p)] * bv[static_cast<size_t>(p * n + j)];
        sum += term;
        magnitude += std::fabs(term);
      }
      const double error = std::fabs(static_cast<double>(cv[static_cast<size_t>(i * n + j)]) - sum);
      if (!(error <= 2.0 * static_cast<double>(k) * eps * magnitude)) ++outside;
      ++checked;
    }
  }
  CAPTURE(checked);
  CHECK(outside == 0);
  CHECK(checked >= (m / 7) * n);
}

}  // namespace

TEST_CASE("a product cut into panels has the same bits for every kernel thread count") {
  ts::Generator g(91);
  // plan_panels(1300, 1100, 200): a grid of 3 x 3 panels of at most 512 x 512, the last ones partial.
  const ts::Tensor a = ts::randn({1300, 200}, g, ts::kFloat64);
  const ts::Tensor b = ts::randn({200, 1100}, g, ts::kFloat64);
  SUBCASE("float32") {
    const ts::Tensor a32 = a.to(ts::kFloat32), b32 = b.to(ts::kFloat32);
    const ts::Tensor c = same_bits_for_every_thread_count<float>([&] { return ts::mm(a32, b32); });
    check_against_reference<float>(a32, b32, c);
  }
  SUBCASE("float64") {
    const ts::Tensor c = same_bits_for_every_thread_count<double>([&] { return ts::matmul(a, b); });
    check_against_reference<double>(a, b, c);
  }
}

TEST_CASE("transposed and strided operands: same bits for every kernel thread count") {
  ts::Generator g(92);
  // a^T read in place (column-major), b with a column stride of 2 (packed panel by panel).
  const ts::Tensor a = ts::randn({517, 513}, g).t();
  const ts::Tensor b = ts::randn({517, 518}, g).slice(1, 0, 518, 2);
  REQUIRE(a.sizes() == ts::Shape{513, 517});
  REQUIRE(b.sizes() == ts::Shape{517, 259});
  REQUIRE(b.strides()[1] == 2);
  const ts::Tensor c = same_bits_for_every_thread_count<float>([&] { return ts::mm(a, b); });
  check_against_reference<float>(a, b, c);
  // Both transposed, in float64.
  const ts::Tensor a64 = ts::randn({300, 700}, g, ts::kFloat64).t();
  const ts::Tensor b64 = ts::randn({290, 300}, g, ts::kFloat64).t();
  const ts::Tensor c64 = same_bits_for_every_thread_count<double>([&] { return ts::mm(a64, b64); });
  check_against_reference<double>(a64, b64, c64);
}

TEST_CASE("bmm: same bits for every kernel thread count") {
  ts::Generator g(93);
  // The batch items are cut into panels too: 3 items x (2 x 2) panels are the tasks.
  const ts::Tensor a = ts::randn({3, 300, 400}, g);
  const ts::Tensor b = ts::randn({3, 400, 350}, g);
  const ts::Tensor c = same_bits_for_every_thread_count<float>([&] { return ts::bmm(a, b); });
  for (int64_t s = 0; s < 3; ++s) check_against_reference<float>(a[s], b[s], c[s]);
  // One right operand shared by every item (batch stride 0) and a left operand whose batch dim is
  // not outermost in memory.
  const ts::Tensor shared = ts::randn({400, 350}, g).unsqueeze(0).expand({3, -1, -1});
  const ts::Tensor interleaved = ts::randn({300, 3, 400}, g).permute({1, 0, 2});
  const ts::Tensor c2 = same_bits_for_every_thread_count<float>([&] { return ts::bmm(interleaved, shared); });
  for (int64_t s = 0; s < 3; ++s) check_against_reference<float>(interleaved[s], shared[s], c2[s]);
}

TEST_CASE("products inside a LocalMode: the same bits for every ts::set_threads count") {
  // With one rank thread the ranks run one after another and each product may use every CPU; with
  // several, ranks run in parallel and each product gets one kernel thread. Both must give the
  // bits of a plain product computed on one thread.
  ts::Generator g(94);
  std::vector<ts::Tensor> as, bs, expected;
  for (int r = 0; r < 3; ++r) {
    as.push_back(ts::randn({700, 600}, g));
    bs.push_back(ts::randn({600, 300}, g));
    KernelThreads one(1);
    expected.push_back(ts::mm(as.back(), bs.back()));
  }
  for (int rank_threads : {1, 3, 0}) {
    CAPTURE(rank_threads);
    ts::set_threads(rank_threads);
    ts::LocalMode mode(3);
    const ts::Tensor a = ts::local_tensor({{0, as[0]}, {1, as[1]}, {2, as[2]}});
    const ts::Tensor b = ts::local_tensor({{0, bs[0]}, {1, bs[1]}, {2, bs[2]}});
    const ts::Tensor c = ts::matmul(a, b);
    for (int r = 0; r < 3; ++r) CHECK(same_bits<float>(c.shard(r), expected[static_cast<size_t>(r)]));
  }
  ts::set_threads(0);
}
