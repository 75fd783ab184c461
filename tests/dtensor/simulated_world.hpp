// A simulated world of n ranks for DTensor op tests, with a generator for dense inputs drawn
// outside LocalMode, and the comparison of a DTensor's global value with a dense result.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <tessera/tessera.hpp>

namespace dtensor_test {

struct World {
  explicit World(int n, uint64_t seed = 42) : mode(n), generator(seed) {}
  tessera::Tensor randn(const tessera::Shape& shape) {
    auto off = mode.disable();
    return tessera::randn(shape, generator);
  }
  tessera::LocalMode mode;
  tessera::Generator generator;
};

inline void check_close(const tessera::DTensor& actual, const tessera::Tensor& expected, double atol = 1e-5) {
  const tessera::Tensor full = actual.full_tensor().reconcile();
  REQUIRE(full.sizes() == expected.sizes());
  CHECK(full.dtype() == expected.dtype());
  CHECK(tessera::allclose(full.to(tessera::kFloat64), expected.to(tessera::kFloat64), 1e-5, atol));
}

}  // namespace dtensor_test
