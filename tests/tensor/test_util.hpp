// Helpers for tensor tests: compare a tensor against values computed independently.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <tessera/tessera.hpp>

namespace test {

// 0..n-1 in the given shape and dtype.
inline tessera::Tensor iota(const tessera::Shape& shape, tessera::DType dtype = tessera::kFloat32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return tessera::arange(n).to(dtype).reshape(shape);
}

template <class T>
void check_values(const tessera::Tensor& t, const tessera::Shape& shape, const std::vector<T>& expected) {
  REQUIRE(t.sizes() == shape);
  const std::vector<T> actual = t.to_vector<T>();
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(expected[i])) {
        CHECK_MESSAGE(std::isnan(actual[i]), "index " << i);
      } else if (std::isinf(expected[i])) {
        CHECK_MESSAGE(actual[i] == expected[i], "index " << i);
      } else {
        CHECK_MESSAGE(actual[i] == doctest::Approx(expected[i]).epsilon(1e-6), "index " << i);
      }
    } else {
      CHECK_MESSAGE(actual[i] == expected[i], "index " << i);
    }
  }
}

}  // namespace test
