// An independent oracle for where a DTensor's elements live: the documented layout formulas (torch.chunk and
// balanced) written out here (chunk and balanced shards, mesh dims nesting left to right, row-major rank
// coordinates), so tests never use Tessera's own layout code as the expected value.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace layout_oracle {

namespace ts = tessera;

struct Range {
  int64_t offset = 0;
  int64_t length = 0;
};

// torch.chunk: f = ceil(n / k) each, the last ones shorter or empty (offset n when empty).
inline Range chunk(int64_t n, int64_t k, int64_t i) {
  if (n % k == 0) return {n / k * i, n / k};
  const int64_t f = (n + k - 1) / k;
  if (f * i >= n) return {n, 0};
  return {f * i, std::min(f, n - f * i)};
}

// The first n % k shards get one extra element.
inline Range balanced(int64_t n, int64_t k, int64_t i) {
  const int64_t base = n / k, extra = n % k;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

inline Range split(const ts::Placement& p, int64_t n, int64_t k, int64_t i) {
  if (p.strategy() == "balanced_shard") return balanced(n, k, i);
  REQUIRE(p.strategy() == "shard");
  return chunk(n, k, i);
}

// Row-major coordinates of `rank` in a mesh of ranks 0..world-1 (as init_device_mesh numbers them).
inline std::vector<int64_t> coordinate(int rank, const std::vector<int64_t>& mesh_shape) {
  std::vector<int64_t> coord(mesh_shape.size());
  int64_t left = rank;
  for (size_t i = mesh_shape.size(); i-- > 0;) {
    coord[i] = left % mesh_shape[i];
    left /= mesh_shape[i];
  }
  return coord;
}

// The range of tensor dim `d` (of size n) that `coord` holds: each mesh dim sharding d splits what
// the mesh dims before it left.
inline Range held(int64_t n, int64_t d, const ts::Placements& placements,
                  const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& coord) {
  Range r{0, n};
  for (size_t i = 0; i < placements.size(); ++i) {
    if (!placements[i].is_shard() || placements[i].dim() != d) continue;
    const Range sub = split(placements[i], r.length, mesh_shape[i], coord[i]);
    r = {r.offset + sub.offset, sub.length};
  }
  return r;
}

// What rank `rank` must hold of the dense tensor `full` under `placements` (Shard and Replicate).
inline ts::Tensor expected_shard(const ts::Tensor& full, const ts::Placements& placements,
                                 const std::vector<int64_t>& mesh_shape, int rank) {
  ts::DisabledLocalMode plain;
  const std::vector<int64_t> coord = coordinate(rank, mesh_shape);
  ts::Tensor t = full;
  for (int64_t d = 0; d < full.dim(); ++d) {
    const Range r = held(full.size(d), d, placements, mesh_shape, coord);
    t = t.narrow(d, r.offset, r.length);
  }
  return t.contiguous();
}

// Every element, as doubles (works for any backend and dtype).
inline std::vector<double> values(const ts::Tensor& t) {
  ts::DisabledLocalMode plain;
  return t.contiguous().to_vector<double>();
}

inline bool close(const std::vector<double>& a, const std::vector<double>& b, double tolerance) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return false;
      continue;
    }
    if (a[i] == b[i]) continue;  // equal infinities too
    const double scale = std::max({1.0, a[i] < 0 ? -a[i] : a[i], b[i] < 0 ? -b[i] : b[i]});
    const double diff = a[i] - b[i];
    if ((diff < 0 ? -diff : diff) > tolerance * scale) return false;
  }
  return true;
}

// Every rank's shard of `actual` has the shape and values the oracle gives it (Shard/Replicate
// placements), and the reassembled tensor equals `full`. `tolerance` 0 means exact.
inline void check_layout(const ts::DTensor& actual, const ts::Tensor& full, double tolerance = 0.0,
                         const std::string& what = "") {
  INFO(what);
  const std::vector<int64_t> mesh_shape = actual.device_mesh().shape();
  REQUIRE(actual.shape() == full.sizes());
  bool pending = false;
  for (const ts::Placement& p : actual.placements()) pending = pending || p.is_partial();
  if (!pending) {
    for (int rank : actual.device_mesh().ranks()) {
      CAPTURE(rank);
      const ts::Tensor expected = expected_shard(full, actual.placements(), mesh_shape, rank);
      const ts::Tensor shard = actual.to_local().shard(rank);
      CHECK(shard.sizes() == expected.sizes());
      CHECK(close(values(shard), values(expected), tolerance));
    }
  }
  const ts::Tensor whole = actual.full_tensor();
  for (int rank : actual.device_mesh().ranks()) {
    CAPTURE(rank);
    CHECK(close(values(whole.shard(rank)), values(full), tolerance));
  }
}

}  // namespace layout_oracle
