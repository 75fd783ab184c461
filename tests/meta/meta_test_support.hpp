// Shared helpers of the test_meta suite: the same program on the cpu backend and on the meta
// backend must give results of the same layout, and only the cpu one has values.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace meta_test {

namespace ts = tessera;

inline ts::TensorOptions on(const std::string& backend, ts::DType dtype = ts::kFloat32) {
  return ts::TensorOptions(dtype).backend(backend);
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The message of the tessera::Error `body` throws; a failed check if it throws none.
template <class Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const ts::Error& e) {
    return e.what();
  }
  FAIL_CHECK("no tessera::Error was thrown");
  return {};
}

// A dense tensor's layout: what a shapes-only backend must reproduce exactly.
inline void check_dense_layout(const ts::Tensor& cpu, const ts::Tensor& meta) {
  REQUIRE(cpu.defined());
  REQUIRE(meta.defined());
  CHECK(cpu.backend() == "cpu");
  CHECK(meta.backend() == "meta");
  CHECK(meta.dtype() == cpu.dtype());
  CHECK(meta.sizes() == cpu.sizes());
  CHECK(meta.strides() == cpu.strides());
  CHECK(meta.is_contiguous() == cpu.is_contiguous());
  CHECK(meta.numel() == cpu.numel());
}

// Dense, or local (per rank: same ranks, and per shard the dense layout).
inline void check_same_layout(const ts::Tensor& cpu, const ts::Tensor& meta) {
  REQUIRE(cpu.defined());
  REQUIRE(meta.defined());
  REQUIRE(meta.is_local() == cpu.is_local());
  if (!cpu.is_local()) return check_dense_layout(cpu, meta);
  REQUIRE(meta.ranks() == cpu.ranks());
  for (const auto& [shard_rank, shard] : cpu.shards()) {
    const auto rank = shard_rank;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(rank);
    check_dense_layout(shard, meta.shard(rank));
  }
}

// What a CommCounter saw on cpu and on meta: the same rows, field by field.
inline void check_same_entries(const std::vector<ts::CommCounter::Entry>& cpu,
                               const std::vector<ts::CommCounter::Entry>& meta) {
  REQUIRE(meta.size() == cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    const ts::CommCounter::Entry& c = cpu[i];
    const ts::CommCounter::Entry& m = meta[i];
    CAPTURE(c.collective);
    CHECK(m.collective == c.collective);
    CHECK(m.mesh_dim == c.mesh_dim);
    CHECK(m.algorithm == c.algorithm);
    CHECK(m.calls == c.calls);
    CHECK(m.bytes_per_rank == c.bytes_per_rank);
    CHECK(m.seconds == c.seconds);
  }
}

// The reading error every value accessor of a meta tensor gives.
inline void check_values_refused(const std::string& message, const std::string& op) {
  CAPTURE(message);
  CHECK(contains(message,
                 op + ": values of a tensor on the meta backend cannot be read: it holds shapes only"));
}

}  // namespace meta_test
