// The CPU backend's float product (plugins/backend-cpu/fma_product.cpp), compiled into this suite
// and run on every vector unit this CPU has: each element must be, bit for bit, the in-order chain
// of fused multiply-adds written out below, whatever the tile edges (sizes around 1, the tile
// widths 4/8/16/24/48 and the inner-dim passes of 32/128), the strides of a (transposed, padded)
// and the row strides of b and c; elements of c outside the product stay untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fma_product.hpp"

namespace {

using tessera::cpu::FmaProduct;
using tessera::cpu::VectorUnit;

const VectorUnit kUnits[] = {VectorUnit::portable, VectorUnit::avx2, VectorUnit::avx512};

// The definition: s = +0, then s = fma(a[i, q], b[q, j], s) for q = 0 .. k-1.
template <class T>
T chain(const std::vector<T>& a, int64_t a_row, int64_t a_col, const std::vector<T>& b, int64_t b_row,
        int64_t i, int64_t j, int64_t k) {
  T s = 0;
  for (int64_t q = 0; q < k; ++q)
    s = std::fma(a[static_cast<size_t>(i * a_row + q * a_col)], b[static_cast<size_t>(q * b_row + j)], s);
  return s;
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// One product of the given shape on `unit`; `transposed` stores a column-major.
template <class T>
void check_product(VectorUnit unit, int64_t m, int64_t n, int64_t k, bool transposed, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> value(-2, 2);
  const int64_t a_row = transposed ? 1 : k + 3, a_col = transposed ? m + 2 : 1;
  const int64_t b_row = n + 5, c_row = n + 7;
  std::vector<T> a(static_cast<size_t>((m + 2) * (k + 3) + 1)), b(static_cast<size_t>(k * b_row + 1));
  for (T& x : a) x = value(rng);
  for (T& x : b) x = value(rng);
  const T sentinel = T(12345.5);
  std::vector<T> c(static_cast<size_t>(m * c_row + 1), sentinel);
  tessera::cpu::fma_product(FmaProduct<T>{a.data(), a_row, a_col, b.data(), b_row, c.data(), c_row, m, n, k},
                            unit);
  int64_t wrong = 0, touched = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < c_row; ++j) {
      const T got = c[static_cast<size_t>(i * c_row + j)];
      if (j >= n)
        touched += !same_bits(got, sentinel);
      else
        wrong += !same_bits(got, chain(a, a_row, a_col, b, b_row, i, j, k));
    }
  touched += !same_bits(c.back(), sentinel);
  const std::string unit_name = tessera::cpu::name_of(unit);
  CAPTURE(unit_name);
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  CAPTURE(transposed);
  CHECK(wrong == 0);
  CHECK(touched == 0);
}

template <class T>
void check_every_shape() {
  uint32_t seed = 1;
  for (VectorUnit unit : kUnits) {
    if (!tessera::cpu::cpu_has(unit)) continue;
    for (int64_t m : {0, 1, 3, 4, 5, 8, 9, 17})
      for (int64_t n : {0, 1, 3, 4, 8, 12, 15, 16, 17, 24, 25, 47, 48, 49, 97})
        for (int64_t k : {0, 1, 2, 31, 32, 33, 129})
          for (bool transposed : {false, true}) check_product<T>(unit, m, n, k, transposed, seed++);
  }
}

}  // namespace

TEST_CASE("fma_product: float elements are the in-order fma chain on every vector unit of this CPU") {
  check_every_shape<float>();
}

TEST_CASE("fma_product: double elements are the in-order fma chain on every vector unit of this CPU") {
  check_every_shape<double>();
}

TEST_CASE("fma_product: many rows and a long inner dim, the same bits on every vector unit") {
  for (VectorUnit unit : kUnits)
    if (tessera::cpu::cpu_has(unit)) check_product<float>(unit, 70, 130, 300, false, 99);
}

TEST_CASE("fma_product: the portable unit is there on every CPU, and the widest unit is one the CPU has") {
  CHECK(tessera::cpu::cpu_has(VectorUnit::portable));
  CHECK(tessera::cpu::cpu_has(tessera::cpu::widest_vector_unit()));
}
