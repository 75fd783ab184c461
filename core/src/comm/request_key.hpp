// What a schedule (and a choice of algorithm) depends on in a request, as a key for caches. A
// lookup compares a request against stored keys through KeyView, so the hot path (every collective
// call) copies neither the algorithm's name nor the ring order nor the members.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/request_topology.hpp"
#include "tessera/sdk/collective.h"

namespace tessera::comm {

struct KeyView {
  std::string_view algorithm;
  std::array<int64_t, 7> fields;  // collective, group size, count, dtype code and bits, op, root
  std::span<const int32_t> ring;
  // SDK 1.3: an algorithm may build differently for other ranks or another topology (a
  // hierarchical one groups by node), so both are part of the key: the group's world ranks and the
  // topology's content (Topology::fingerprint, equal for the same preset in any world). On a
  // uniform topology (Topology::uniform) every group of one size sees the same locality, transfer
  // times and ring order, so the key holds no members there: one schedule (and one cost) per shape
  // of group, not one per group (collective.h asks algorithms to read group_ranks only for where
  // ranks are).
  std::span<const int32_t> members;
  uint64_t topology = 0;

  friend bool operator<(const KeyView& a, const KeyView& b) {
    if (a.fields != b.fields) return a.fields < b.fields;
    if (a.topology != b.topology) return a.topology < b.topology;
    if (a.algorithm != b.algorithm) return a.algorithm < b.algorithm;
    if (!std::ranges::equal(a.ring, b.ring)) return std::ranges::lexicographical_compare(a.ring, b.ring);
    return std::ranges::lexicographical_compare(a.members, b.members);
  }
};

// The request's scalar fields, in KeyView::fields order.
inline std::array<int64_t, 7> fields_of(const tessera_collective_request& q) {
  return {q.collective, q.group_size, q.count, q.dtype.code, q.dtype.bits, q.reduce_op, q.root};
}

inline KeyView view_of(std::string_view algorithm, const tessera_collective_request& q) {
  const auto p = static_cast<size_t>(q.group_size);
  const RequestTopology* where = topology_of(q);
  const bool relative = where != nullptr && where->topology->uniform();
  return {algorithm, fields_of(q),
          q.ring_order != nullptr ? std::span<const int32_t>(q.ring_order, p) : std::span<const int32_t>(),
          q.group_ranks != nullptr && !relative ? std::span<const int32_t>(q.group_ranks, p)
                                                : std::span<const int32_t>(),
          where != nullptr ? where->topology->fingerprint() : 0};
}

struct CacheKey {
  std::string algorithm;
  std::array<int64_t, 7> fields;
  std::vector<int32_t> ring;
  std::vector<int32_t> members;
  uint64_t topology = 0;

  explicit CacheKey(const KeyView& v)
      : algorithm(v.algorithm),
        fields(v.fields),
        ring(v.ring.begin(), v.ring.end()),
        members(v.members.begin(), v.members.end()),
        topology(v.topology) {}
  KeyView view() const { return {algorithm, fields, ring, members, topology}; }
};

struct KeyLess {
  using is_transparent = void;
  bool operator()(const CacheKey& a, const CacheKey& b) const { return a.view() < b.view(); }
  bool operator()(const CacheKey& a, const KeyView& b) const { return a.view() < b; }
  bool operator()(const KeyView& a, const CacheKey& b) const { return a < b.view(); }
};

}  // namespace tessera::comm
