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
  tessera_chunk chunk;  // Send: the source; Recv/RecvReduce/Copy/Reduce: the destination
  int32_t peer = -1;    // Send/Recv/RecvReduce
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

  int group_size() const { return static_cast<int>(ranks.size()); }
  size_t step_count() const;
  std::string describe_step(int rank, size_t index) const;  // for error messages
};

// Buffer sizes (input, output) of every rank for a request, as collective.h defines them.
std::pair<int64_t, int64_t> io_sizes(const tessera_collective_request& request, int rank);
const char* collective_name(int32_t collective);
// Parses "all_reduce" etc.; returns -1 for an unknown name.
int32_t collective_from_name(const std::string& name);

}  // namespace tessera::comm
