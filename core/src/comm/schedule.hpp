// The schedule IR: what a collective algorithm emits and the executor, checker and cost model read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/sdk/collective.h"

namespace tessera::comm {

enum class StepKind : uint8_t { Send, Recv, RecvReduce, Copy, Reduce };

struct Step {
  StepKind kind;
  tessera_chunk chunk;     // Send: the source; Recv/RecvReduce/Copy/Reduce: the destination
  int32_t peer = -1;       // Send/Recv/RecvReduce
  tessera_chunk source{};  // Copy/Reduce
};

// One group rank's program: its buffers (0 input, 1 output, 2.. scratch) and its steps.
struct RankProgram {
  std::vector<int64_t> buffer_sizes;
  std::vector<Step> steps;
};

struct Schedule {
  std::string algorithm;
  tessera_collective_request request{};
  std::vector<RankProgram> ranks;  // indexed by group rank
  // Derived when the schedule is cached (in_place.hpp's runs_in_place): whether every rank may run
  // with its output in its input's memory.
  bool in_place = false;

  int group_size() const { return static_cast<int>(ranks.size()); }
  size_t step_count() const;
  std::string describe_step(int rank, size_t index) const;  // for error messages
};

// The largest group a schedule is built for: schedules hold per-rank programs, so a group size is
// bounded like any other size rather than left to exhaust memory.
inline constexpr int32_t kMaxGroupSize = int32_t{1} << 16;

// Empty when a request is well formed (known collective and reduce op, 1 <= group size <=
// kMaxGroupSize, root a group rank, count >= 0 and every buffer size representable); otherwise what
// is wrong with it.
std::string request_problem(const tessera_collective_request& request);
// "all_reduce (group size 4, count 8, float32, sum)": a request as messages name it.
std::string describe_request(const tessera_collective_request& request);

// Buffer sizes (input, output) of every rank for a well-formed request, as collective.h defines them.
std::pair<int64_t, int64_t> io_sizes(const tessera_collective_request& request, int rank);

// Empty when `chunk` lies inside one of `program`'s buffers (checked without overflow) and, if
// `written`, is not in the read-only input; otherwise what is wrong, naming `rank`.
std::string chunk_problem(const RankProgram& program, int rank, const tessera_chunk& chunk, bool written);
// Empty when every step of every rank names a valid peer and chunks within bounds, and local steps
// move equal counts: what the recorder checks as steps arrive, for schedules made any other way.
std::string structure_problem(const Schedule& schedule);
const char* collective_name(int32_t collective);
// "sum", "max", ... for TESSERA_REDUCE_*; "unknown op" outside them.
const char* reduce_op_name(int32_t reduce_op);
// Whether a collective's request carries a reduce op (only their schedules may reduce), and a root.
bool reducing(int32_t collective);
bool rooted(int32_t collective);
// Parses "all_reduce" etc.; returns -1 for an unknown name.
int32_t collective_from_name(const std::string& name);

}  // namespace tessera::comm
