// Header-only helpers for collective-algorithm plugins: a C++ face for the schedule builder and a
// builder that fills a tessera_collective_algorithm table from one function per collective.
//
//   static void ring_all_gather(const tessera_collective_request& request, const tessera::sdk::Schedule& s) {
//     ... s.send(rank, tessera::sdk::chunk(TESSERA_BUFFER_OUTPUT, offset, count), peer); ...
//   }
//   static tessera::sdk::AlgorithmBuilder ring("ring");
//   ring.collective(TESSERA_COLL_ALL_GATHER, &ring_all_gather);   // optional third argument: a check
//   plugin.add_algorithm(ring);
#pragma once

#include <array>
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
      "all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all", "scatter", "gather", "barrier"};
  return collective >= 0 && collective < TESSERA_COLL_COUNT ? names[static_cast<size_t>(collective)] : "unknown";
}

// The builder as algorithm code uses it: one call per step.
class Schedule {
 public:
  explicit Schedule(const tessera_schedule_builder* builder) : b_(builder) {}
  int32_t add_buffer(int32_t rank, int64_t count) const { return b_->add_buffer(b_->context, rank, count); }
  void send(int32_t rank, tessera_chunk c, int32_t peer) const { b_->send(b_->context, rank, c, peer); }
  void recv(int32_t rank, tessera_chunk c, int32_t peer) const { b_->recv(b_->context, rank, c, peer); }
  void recv_reduce(int32_t rank, tessera_chunk c, int32_t peer) const { b_->recv_reduce(b_->context, rank, c, peer); }
  void copy(int32_t rank, tessera_chunk dst, tessera_chunk src) const { b_->copy(b_->context, rank, dst, src); }
  void reduce(int32_t rank, tessera_chunk dst, tessera_chunk src) const { b_->reduce(b_->context, rank, dst, src); }

 private:
  const tessera_schedule_builder* b_;
};

inline bool schedule_trivial(const tessera_collective_request& request, const Schedule& s) {
  if (request.count == 0) return true;
  if (request.group_size > 1) return false;
  s.copy(0, chunk(TESSERA_BUFFER_OUTPUT, 0, request.count), chunk(TESSERA_BUFFER_INPUT, 0, request.count));
  return true;
}

// Throws sdk::Error(TESSERA_UNIMPLEMENTED, reason) when the request does not fit the algorithm.
using CheckFunction = void (*)(const tessera_collective_request&);
using BuildFunction = void (*)(const tessera_collective_request&, const Schedule&);

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

  const tessera_collective_algorithm* table() const { return &table_; }

 private:
  static const AlgorithmBuilder& self(void* context) { return *static_cast<const AlgorithmBuilder*>(context); }

  void require(const tessera_collective_request& request) const {
    if (request.collective < 0 || request.collective >= TESSERA_COLL_COUNT ||
        builds_[static_cast<size_t>(request.collective)] == nullptr)
      throw Error(TESSERA_UNIMPLEMENTED, std::string(table_.name) + " does not implement " +
                                             collective_name(request.collective));
    if (CheckFunction check = checks_[static_cast<size_t>(request.collective)]) check(request);
  }

  static tessera_status check_entry(void* context, const tessera_collective_request* request, tessera_error* error) {
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

  tessera_collective_algorithm table_{};
  std::array<BuildFunction, TESSERA_COLL_COUNT> builds_{};
  std::array<CheckFunction, TESSERA_COLL_COUNT> checks_{};
};

}  // namespace tessera::sdk
