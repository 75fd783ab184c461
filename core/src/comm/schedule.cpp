#include "comm/schedule.hpp"

#include <fmt/format.h>

#include <array>

#include "dispatch/backend.hpp"

namespace tessera::comm {
namespace {
constexpr std::array<const char*, TESSERA_COLL_COUNT> kNames = {"all_reduce", "broadcast",      "reduce",
                                                                "all_gather", "reduce_scatter", "all_to_all",
                                                                "scatter",    "gather",         "barrier"};
constexpr std::array<const char*, 7> kReduceNames = {"sum", "product", "min", "max", "band", "bor", "bxor"};

// The end of a chunk for messages; a chunk whose end overflows is shown by its count instead.
std::string chunk_text(const tessera_chunk& c) {
  int64_t end = 0;
  if (__builtin_add_overflow(c.offset, c.count, &end))
    return fmt::format("buffer {}[{}:+{}]", c.buffer, c.offset, c.count);
  return fmt::format("buffer {}[{}:{}]", c.buffer, c.offset, end);
}

bool blocked(int32_t collective) {  // a buffer of group_size blocks of `count`
  return collective == TESSERA_COLL_ALL_GATHER || collective == TESSERA_COLL_REDUCE_SCATTER ||
         collective == TESSERA_COLL_ALL_TO_ALL || collective == TESSERA_COLL_SCATTER ||
         collective == TESSERA_COLL_GATHER;
}
}  // namespace

bool rooted(int32_t collective) {
  return collective == TESSERA_COLL_BROADCAST || collective == TESSERA_COLL_REDUCE ||
         collective == TESSERA_COLL_SCATTER || collective == TESSERA_COLL_GATHER;
}

bool reducing(int32_t collective) {
  return collective == TESSERA_COLL_ALL_REDUCE || collective == TESSERA_COLL_REDUCE ||
         collective == TESSERA_COLL_REDUCE_SCATTER;
}

const char* reduce_op_name(int32_t reduce_op) {
  return reduce_op >= 0 && reduce_op < static_cast<int32_t>(kReduceNames.size())
             ? kReduceNames[static_cast<size_t>(reduce_op)]
             : "unknown op";
}

const char* collective_name(int32_t collective) {
  return collective >= 0 && collective < TESSERA_COLL_COUNT ? kNames[static_cast<size_t>(collective)]
                                                            : "unknown";
}

int32_t collective_from_name(const std::string& name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i]) return static_cast<int32_t>(i);
  return -1;
}

std::string request_problem(const tessera_collective_request& q) {
  if (q.collective < 0 || q.collective >= TESSERA_COLL_COUNT)
    return fmt::format("unknown collective {} (expected 0..{})", q.collective, TESSERA_COLL_COUNT - 1);
  if (q.group_size < 1 || q.group_size > kMaxGroupSize)
    return fmt::format("group size {} is out of range (expected 1..{})", q.group_size, kMaxGroupSize);
  if (q.count < 0) return fmt::format("count {} is negative", q.count);
  if (rooted(q.collective) && (q.root < 0 || q.root >= q.group_size))
    return fmt::format("root {} is not a group rank (expected 0..{})", q.root, q.group_size - 1);
  if (reducing(q.collective) && (q.reduce_op < 0 || q.reduce_op >= static_cast<int32_t>(kReduceNames.size())))
    return fmt::format("unknown reduce op {} (expected 0..{})", q.reduce_op, kReduceNames.size() - 1);
  int64_t blocks = 0;
  if (blocked(q.collective) && __builtin_mul_overflow(q.count, int64_t{q.group_size}, &blocks))
    return fmt::format("group size {} times count {} does not fit in 64 bits", q.group_size, q.count);
  return {};
}

std::string describe_request(const tessera_collective_request& q) {
  DType dtype{};
  const std::string dtype_text = dispatch::from_dl(q.dtype, &dtype)
                                     ? std::string(dtype_name(dtype))
                                     : fmt::format("dtype (code {}, {} bits)", q.dtype.code, q.dtype.bits);
  std::string text = fmt::format("{} (group size {}, count {}, {}", collective_name(q.collective),
                                 q.group_size, q.count, dtype_text);
  if (reducing(q.collective)) text += fmt::format(", {}", reduce_op_name(q.reduce_op));
  if (rooted(q.collective)) text += fmt::format(", root {}", q.root);
  return text + ")";
}

std::pair<int64_t, int64_t> io_sizes(const tessera_collective_request& request, int rank) {
  const int64_t n = request.count;
  const int64_t p = request.group_size;
  (void)rank;
  switch (request.collective) {
    case TESSERA_COLL_ALL_GATHER:
      return {n, p * n};
    case TESSERA_COLL_REDUCE_SCATTER:
      return {p * n, n};
    case TESSERA_COLL_ALL_TO_ALL:
      return {p * n, p * n};
    case TESSERA_COLL_SCATTER:
      return {p * n, n};
    case TESSERA_COLL_GATHER:
      return {n, p * n};
    case TESSERA_COLL_BARRIER:
      return {0, 0};
    default:
      return {n, n};
  }
}

std::string chunk_problem(const RankProgram& program, int rank, const tessera_chunk& chunk, bool written) {
  const auto& sizes = program.buffer_sizes;
  if (chunk.buffer < 0 || static_cast<size_t>(chunk.buffer) >= sizes.size())
    return fmt::format("rank {} uses buffer {}, but it has buffers 0..{}", rank, chunk.buffer,
                       sizes.size() - 1);
  const int64_t size = sizes[static_cast<size_t>(chunk.buffer)];
  // offset <= size first, so size - offset cannot overflow: no offset + count is ever formed.
  if (chunk.offset < 0 || chunk.count < 0 || chunk.offset > size || chunk.count > size - chunk.offset)
    return fmt::format("rank {}: chunk at offset {} of {} elements is out of bounds of buffer {} (size {})",
                       rank, chunk.offset, chunk.count, chunk.buffer, size);
  if (written && chunk.buffer == TESSERA_BUFFER_INPUT)
    return fmt::format("rank {} writes into its input buffer ({}); inputs are read-only", rank,
                       chunk_text(chunk));
  return {};
}

std::string structure_problem(const Schedule& schedule) {
  const int p = schedule.group_size();
  for (int r = 0; r < p; ++r) {
    const RankProgram& program = schedule.ranks[static_cast<size_t>(r)];
    if (program.buffer_sizes.size() < 2) return fmt::format("rank {} lacks its input and output buffers", r);
    for (size_t i = 0; i < program.steps.size(); ++i) {
      const Step& s = program.steps[i];
      const bool message =
          s.kind == StepKind::Send || s.kind == StepKind::Recv || s.kind == StepKind::RecvReduce;
      // A collective without a reduce op has no reduction to run (its request's op is not even checked).
      if ((s.kind == StepKind::Reduce || s.kind == StepKind::RecvReduce) &&
          !reducing(schedule.request.collective))
        return fmt::format(
            "rank {} step {} reduces, but {} does not reduce (only all_reduce, reduce and "
            "reduce_scatter schedules may)",
            r, i, collective_name(schedule.request.collective));
      if (message && (s.peer < 0 || s.peer >= p || s.peer == r))
        return fmt::format("rank {} step {} names peer {}, expected another rank in 0..{}", r, i, s.peer,
                           p - 1);
      std::string problem = chunk_problem(program, r, s.chunk, s.kind != StepKind::Send);
      if (problem.empty() && !message) problem = chunk_problem(program, r, s.source, false);
      if (problem.empty() && !message && s.source.count != s.chunk.count)
        problem = fmt::format("rank {}: local step between chunks of {} and {} elements", r, s.chunk.count,
                              s.source.count);
      if (!problem.empty()) return fmt::format("step {}: {}", i, problem);
    }
  }
  return {};
}

size_t Schedule::step_count() const {
  size_t total = 0;
  for (const RankProgram& rank : ranks) total += rank.steps.size();
  return total;
}

std::string Schedule::describe_step(int rank, size_t index) const {
  const Step& s = ranks[static_cast<size_t>(rank)].steps[index];
  switch (s.kind) {
    case StepKind::Send:
      return fmt::format("rank {} step {}: send {} to rank {}", rank, index, chunk_text(s.chunk), s.peer);
    case StepKind::Recv:
      return fmt::format("rank {} step {}: recv {} from rank {}", rank, index, chunk_text(s.chunk), s.peer);
    case StepKind::RecvReduce:
      return fmt::format("rank {} step {}: recv-reduce {} from rank {}", rank, index, chunk_text(s.chunk),
                         s.peer);
    case StepKind::Copy:
      return fmt::format("rank {} step {}: copy {} <- {}", rank, index, chunk_text(s.chunk),
                         chunk_text(s.source));
    case StepKind::Reduce:
      return fmt::format("rank {} step {}: reduce {} <- {}", rank, index, chunk_text(s.chunk),
                         chunk_text(s.source));
  }
  return {};
}

}  // namespace tessera::comm
