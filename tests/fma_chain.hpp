// The defined bits of a float matrix product (plugins/backend-cpu/fma_product.hpp), written out
// as the independent oracle of the tests that pin them: element (i, j) of a @ b is s = +0, then
// s = fma(a[i, q], b[q, j], s) for q = 0 .. k-1.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tessera/tessera.hpp>
#include <vector>

namespace test {

// How many elements of c = a @ b (2-d plain tensors) are not, bit for bit, the in-order chain.
template <class T>
int64_t elements_off_the_chain(const tessera::Tensor& a, const tessera::Tensor& b, const tessera::Tensor& c) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  REQUIRE(c.sizes() == tessera::Shape{m, n});
  const std::vector<T> av = a.contiguous().to_vector<T>(), bv = b.contiguous().to_vector<T>();
  const std::vector<T> cv = c.contiguous().to_vector<T>();
  int64_t off = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T s = 0;
      for (int64_t q = 0; q < k; ++q)
        s = std::fma(av[static_cast<size_t>(i * k + q)], bv[static_cast<size_t>(q * n + j)], s);
      off += std::memcmp(&s, &cv[static_cast<size_t>(i * n + j)], sizeof(T)) != 0;
    }
  return off;
}

}  // namespace test
