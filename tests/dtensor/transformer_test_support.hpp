// Shared by the DTensor tests of the transformer ops: global values and fixed inputs.
#pragma once

#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
#include <thread>

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

// Calls of every collective whose name contains `word` ("gather": all_gather, all_gather_into_tensor, ...).
inline int64_t calls_named(const ts::CommCounter& counter, const std::string& word) {
  int64_t calls = 0;
  for (const ts::CommCounter::Entry& e : counter.entries())
    if (e.collective.find(word) != std::string::npos) calls += e.calls;
  return calls;
}

// The bytes per rank one all_reduce of `n` float64 values over `mesh` (1-d) moves, as CommCounter counts.
inline int64_t all_reduce_bytes(const ts::DeviceMesh& mesh, int64_t n) {
  ts::RankMap<ts::Tensor> shards;
  for (int r : mesh.ranks()) shards.set(r, ts::zeros({n}, ts::kFloat64));
  const ts::DTensor partial = ts::from_local(ts::local_tensor(std::move(shards)), mesh, {ts::Partial()});
  ts::CommCounter counter;
  partial.redistribute({ts::Replicate()});
  REQUIRE(counter.calls("all_reduce") == 1);
  return counter.bytes_per_rank();
}

}  // namespace tt
