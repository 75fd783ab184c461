// Float products through the public API have defined bits (plugins/backend-cpu/fma_product.hpp):
// element (i, j) is s = +0, then s = fma(a[i, q], b[q, j], s) for q = 0 .. k-1, on any CPU.
// The chain is written out here and compared bit for bit, for contiguous, transposed and strided
// operands (a strided b is packed before the product) and for bmm with a shared right operand.
#include <array>
#include <vector>

#include "fma_chain.hpp"
#include "test_util.hpp"

namespace ts = tessera;

using test::elements_off_the_chain;

TEST_CASE("mm: every float32 and float64 element is the in-order fma chain") {
  ts::Generator g(7);
  // {40, 300, 100}: enough rows that each pass's column tile of b is packed first, three passes over
  // the inner dim and a narrow last column tile.
  for (const auto& sizes : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {37, 53, 71}, {8, 300, 49}, {65, 129, 17}, {40, 300, 100}}) {
    // Named, not structured bindings: clang 14 cannot capture one.
    const int64_t m = sizes[0], k = sizes[1], n = sizes[2];
    CAPTURE(m);
    CAPTURE(k);
    CAPTURE(n);
    const ts::Tensor a = ts::randn({m, k}, g), b = ts::randn({k, n}, g);
    CHECK(elements_off_the_chain<float>(a, b, ts::mm(a, b)) == 0);
    const ts::Tensor a64 = ts::randn({m, k}, g, ts::kFloat64), b64 = ts::randn({k, n}, g, ts::kFloat64);
    CHECK(elements_off_the_chain<double>(a64, b64, ts::mm(a64, b64)) == 0);
  }
}

TEST_CASE("mm: transposed and strided operands give the chain's bits too") {
  ts::Generator g(8);
  const ts::Tensor at = ts::randn({90, 33}, g).t();                 // [33, 90], column-major
  const ts::Tensor bs = ts::randn({90, 50}, g).slice(1, 0, 50, 2);  // [90, 25], column stride 2
  const ts::Tensor bt = ts::randn({41, 90}, g).t();                 // [90, 41], column stride 90
  CHECK(elements_off_the_chain<float>(at, bs, ts::mm(at, bs)) == 0);
  CHECK(elements_off_the_chain<float>(at, bt, ts::mm(at, bt)) == 0);
}

TEST_CASE("bmm: each batch item is the chain, with a right operand shared by every item") {
  ts::Generator g(9);
  const ts::Tensor a = ts::randn({3, 19, 40}, g);
  const ts::Tensor shared = ts::randn({40, 27}, g).unsqueeze(0).expand({3, -1, -1});
  const ts::Tensor c = ts::bmm(a, shared);
  for (int64_t s = 0; s < 3; ++s) CHECK(elements_off_the_chain<float>(a[s], shared[s], c[s]) == 0);
}
