// Shared by the DTensor tests of the transformer ops: global values and fixed inputs.
#pragma once

#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace tt {

namespace ts = tessera;

// The global value of a DTensor (its full_tensor's shard: all shards are equal).
inline ts::Tensor global(const ts::DTensor& t) {
  ts::NoGradGuard off;
  return t.full_tensor().shard(t.device_mesh().ranks()[0]);
}

// Distinct float64 values, a * ((i * 7 + 3) % 11) / 10 - b, in `shape`.
inline ts::Tensor pattern(const ts::Shape& shape, double a, double b) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(a * static_cast<double>((i * 7 + 3) % 11) / 10.0 - b);
  return ts::from_values(v, shape);
}

inline void check_close(const ts::Tensor& actual, const ts::Tensor& expected, double atol = 1e-12) {
  REQUIRE(actual.sizes() == expected.sizes());
  const std::vector<double> a = actual.to(ts::kFloat64).contiguous().to_vector<double>();
  const std::vector<double> e = expected.to(ts::kFloat64).contiguous().to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i)
    CHECK_MESSAGE(std::abs(a[i] - e[i]) <= atol + 1e-10 * std::abs(e[i]),
                  "index " << i << ": " << a[i] << " vs " << e[i]);
}

}  // namespace tt
