#include "comm/schedule.hpp"

#include <array>

#include <fmt/format.h>

namespace tessera::comm {
namespace {
constexpr std::array<const char*, TESSERA_COLL_COUNT> kNames = {
    "all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all", "scatter", "gather", "barrier"};

std::string chunk_text(const tessera_chunk& c) {
  return fmt::format("buffer {}[{}:{}]", c.buffer, c.offset, c.offset + c.count);
}
}  // namespace

const char* collective_name(int32_t collective) {
  return collective >= 0 && collective < TESSERA_COLL_COUNT ? kNames[static_cast<size_t>(collective)] : "unknown";
}

int32_t collective_from_name(const std::string& name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i]) return static_cast<int32_t>(i);
  return -1;
}

std::pair<int64_t, int64_t> io_sizes(const tessera_collective_request& request, int rank) {
  const int64_t n = request.count;
  const int64_t p = request.group_size;
  (void)rank;
  switch (request.collective) {
    case TESSERA_COLL_ALL_GATHER: return {n, p * n};
    case TESSERA_COLL_REDUCE_SCATTER: return {p * n, n};
    case TESSERA_COLL_ALL_TO_ALL: return {p * n, p * n};
    case TESSERA_COLL_SCATTER: return {p * n, n};
    case TESSERA_COLL_GATHER: return {n, p * n};
    case TESSERA_COLL_BARRIER: return {0, 0};
    default: return {n, n};
  }
}

size_t Schedule::step_count() const {
  size_t total = 0;
  for (const RankProgram& rank : ranks) total += rank.steps.size();
  return total;
}

std::string Schedule::describe_step(int rank, size_t index) const {
  const Step& s = ranks[static_cast<size_t>(rank)].steps[index];
  switch (s.kind) {
    case StepKind::Send: return fmt::format("rank {} step {}: send {} to rank {}", rank, index, chunk_text(s.chunk), s.peer);
    case StepKind::Recv:
      return fmt::format("rank {} step {}: recv {} from rank {}", rank, index, chunk_text(s.chunk), s.peer);
    case StepKind::RecvReduce:
      return fmt::format("rank {} step {}: recv-reduce {} from rank {}", rank, index, chunk_text(s.chunk), s.peer);
    case StepKind::Copy:
      return fmt::format("rank {} step {}: copy {} <- {}", rank, index, chunk_text(s.chunk), chunk_text(s.source));
    case StepKind::Reduce:
      return fmt::format("rank {} step {}: reduce {} <- {}", rank, index, chunk_text(s.chunk), chunk_text(s.source));
  }
  return {};
}

}  // namespace tessera::comm
