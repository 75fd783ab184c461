// Header-only helpers for collective-algorithm plugins: a C++ face for the schedule builder and a
// builder that fills a tessera_collective_algorithm table from one function per collective.
//
//   static void ring_all_gather(const tessera_collective_request& request, const tessera::sdk::Schedule& s) {
//     ... s.send(rank, tessera::sdk::chunk(TESSERA_BUFFER_OUTPUT, offset, count), peer); ...
//   }
//   static tessera::sdk::AlgorithmBuilder ring("ring");
//   ring.collective(TESSERA_COLL_ALL_GATHER, &ring_all_gather);   // optional third argument: a check
//   ring.estimate(TESSERA_COLL_ALL_GATHER, &ring_all_gather_seconds);  // optional (SDK 1.3): tuning
//   plugin.add_algorithm(ring);
//
// SDK 1.3 requests say where the group's ranks are: has_topology(request), world_rank(request, r),
// locality(request, r, TESSERA_LOCALITY_NODE) and transfer_time(request, from, to, bytes) below read
// it, and answer sensibly for a request from an older host that has none.
#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "tessera/sdk/collective.h"
#include "tessera/sdk/cpp/errors.hpp"

namespace tessera::sdk {

inline tessera_chunk chunk(int32_t buffer, int64_t offset, int64_t count) { return {buffer, offset, count}; }

// Offsets of `parts` near-equal blocks of n elements (the first n % parts blocks one larger);
// block i is [offsets[i], offsets[i + 1]). Algorithms that split one buffer use it so that every
// rank agrees on the block boundaries.
inline std::vector<int64_t> block_offsets(int64_t n, int64_t parts) {
  std::vector<int64_t> offsets(static_cast<size_t>(parts) + 1, 0);
  for (int64_t i = 0; i < parts; ++i) offsets[i + 1] = offsets[i] + n / parts + (i < n % parts ? 1 : 0);
  return offsets;
}

// `index` mod p, for any sign: ring positions and relative ranks wrap around the group.
inline int32_t wrap(int64_t index, int32_t p) { return static_cast<int32_t>(((index % p) + p) % p); }

// A group of one has nothing to exchange and count 0 nothing to move: the schedule is at most the
// local copy the collective's definition asks for (input and output have the same size when
// p == 1). Returns true when it handled the request, so an algorithm can start with
//   if (tessera::sdk::schedule_trivial(request, s)) return;
class Schedule;
bool schedule_trivial(const tessera_collective_request& request, const Schedule& s);

inline const char* collective_name(int32_t collective) {
  static constexpr std::array<const char*, TESSERA_COLL_COUNT> names = {
      "all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter",
      "all_to_all", "scatter",   "gather", "barrier"};
  return collective >= 0 && collective < TESSERA_COLL_COUNT ? names[static_cast<size_t>(collective)]
                                                            : "unknown";
}

// The builder as algorithm code uses it: one call per step.
class Schedule {
 public:
  explicit Schedule(const tessera_schedule_builder* builder) : b_(builder) {}
  int32_t add_buffer(int32_t rank, int64_t count) const { return b_->add_buffer(b_->context, rank, count); }
  void send(int32_t rank, tessera_chunk c, int32_t peer) const { b_->send(b_->context, rank, c, peer); }
  void recv(int32_t rank, tessera_chunk c, int32_t peer) const { b_->recv(b_->context, rank, c, peer); }
  void recv_reduce(int32_t rank, tessera_chunk c, int32_t peer) const {
    b_->recv_reduce(b_->context, rank, c, peer);
  }
  void copy(int32_t rank, tessera_chunk dst, tessera_chunk src) const {
    b_->copy(b_->context, rank, dst, src);
  }
  void reduce(int32_t rank, tessera_chunk dst, tessera_chunk src) const {
    b_->reduce(b_->context, rank, dst, src);
  }

 private:
  const tessera_schedule_builder* b_;
};

inline bool schedule_trivial(const tessera_collective_request& request, const Schedule& s) {
  if (request.count == 0) return true;
  if (request.group_size > 1) return false;
  s.copy(0, chunk(TESSERA_BUFFER_OUTPUT, 0, request.count), chunk(TESSERA_BUFFER_INPUT, 0, request.count));
  return true;
}

// ---- The request's topology (SDK 1.3). Group ranks are 0..p-1 as everywhere in a request.

// Whether the host filled the topology fields (an SDK 1.3 host does for every request it makes).
inline bool has_topology(const tessera_collective_request& request) {
  return request.struct_size >=
             offsetof(tessera_collective_request, transfer_time) + sizeof(request.transfer_time) &&
         request.group_ranks != nullptr && request.locality != nullptr && request.transfer_time != nullptr;
}
// Group rank `rank`'s world rank; `rank` itself without a topology.
inline int32_t world_rank(const tessera_collective_request& request, int32_t rank) {
  return has_topology(request) && rank >= 0 && rank < request.group_size ? request.group_ranks[rank] : rank;
}
// The domain of group rank `rank` at `level` (TESSERA_LOCALITY_NUMA, _NODE, _SWITCH): ranks with the
// same id share it. -1 when the topology does not say (or there is none).
inline int32_t locality(const tessera_collective_request& request, int32_t rank, int32_t level) {
  return has_topology(request) ? request.locality(request.topology, rank, level) : -1;
}
// Alpha-beta seconds to send `bytes` from group rank `from` to `to` on the topology in force; NaN
// without a topology or for a rank outside the group, infinity when the topology cannot join them.
inline double transfer_time(const tessera_collective_request& request, int32_t from, int32_t to,
                            int64_t bytes) {
  return has_topology(request) ? request.transfer_time(request.topology, from, to, bytes)
                               : std::numeric_limits<double>::quiet_NaN();
}
// The request's element size in bytes, for estimates.
inline int64_t element_bytes(const tessera_collective_request& request) {
  return (static_cast<int64_t>(request.dtype.bits) * request.dtype.lanes + 7) / 8;
}

// Throws sdk::Error(TESSERA_UNIMPLEMENTED, reason) when the request does not fit the algorithm.
using CheckFunction = void (*)(const tessera_collective_request&);
using BuildFunction = void (*)(const tessera_collective_request&, const Schedule&);
// Seconds the algorithm expects to take for a request its check accepted (finite, >= 0). Throwing
// sdk::Error declines (the host then costs the schedule with its own model).
using EstimateFunction = double (*)(const tessera_collective_request&);

class AlgorithmBuilder {
 public:
  explicit AlgorithmBuilder(const char* name) {
    table_.struct_size = sizeof(table_);
    table_.name = name;
    table_.context = this;
    table_.check = &check_entry;
    table_.build = &build_entry;
  }
  AlgorithmBuilder(const AlgorithmBuilder&) = delete;
  AlgorithmBuilder& operator=(const AlgorithmBuilder&) = delete;

  // Registers the schedule of one collective, with an optional precondition.
  AlgorithmBuilder& collective(int32_t which, BuildFunction build, CheckFunction check = nullptr) {
    builds_[static_cast<size_t>(which)] = build;
    checks_[static_cast<size_t>(which)] = check;
    table_.collectives |= uint64_t{1} << which;
    return *this;
  }

  // SDK 1.3, optional: the algorithm's own time estimate for one collective, which the selection
  // rule "auto" compares. Collectives without one are costed by the host's model.
  AlgorithmBuilder& estimate(int32_t which, EstimateFunction estimate) {
    estimates_[static_cast<size_t>(which)] = estimate;
    table_.estimate = &estimate_entry;
    return *this;
  }

  const tessera_collective_algorithm* table() const { return &table_; }

 private:
  static const AlgorithmBuilder& self(void* context) {
    return *static_cast<const AlgorithmBuilder*>(context);
  }

  void require(const tessera_collective_request& request) const {
    if (request.collective < 0 || request.collective >= TESSERA_COLL_COUNT ||
        builds_[static_cast<size_t>(request.collective)] == nullptr)
      throw Error(TESSERA_UNIMPLEMENTED,
                  std::string(table_.name) + " does not implement " + collective_name(request.collective));
    if (CheckFunction check = checks_[static_cast<size_t>(request.collective)]) check(request);
  }

  static tessera_status check_entry(void* context, const tessera_collective_request* request,
                                    tessera_error* error) {
    return guarded(error, [&] { self(context).require(*request); });
  }
  static tessera_status build_entry(void* context, const tessera_collective_request* request,
                                    const tessera_schedule_builder* builder, tessera_error* error) {
    return guarded(error, [&] {
      const AlgorithmBuilder& algorithm = self(context);
      algorithm.require(*request);
      algorithm.builds_[static_cast<size_t>(request->collective)](*request, Schedule(builder));
    });
  }

  static tessera_status estimate_entry(void* context, const tessera_collective_request* request,
                                       double* seconds, tessera_error* error) {
    return guarded(error, [&] {
      const AlgorithmBuilder& algorithm = self(context);
      algorithm.require(*request);
      EstimateFunction estimate = algorithm.estimates_[static_cast<size_t>(request->collective)];
      if (estimate == nullptr)
        throw Error(TESSERA_UNIMPLEMENTED, std::string(algorithm.table_.name) + " has no estimate for " +
                                               collective_name(request->collective));
      *seconds = estimate(*request);
    });
  }

  tessera_collective_algorithm table_{};
  std::array<BuildFunction, TESSERA_COLL_COUNT> builds_{};
  std::array<CheckFunction, TESSERA_COLL_COUNT> checks_{};
  std::array<EstimateFunction, TESSERA_COLL_COUNT> estimates_{};
};

}  // namespace tessera::sdk
