// Alpha-beta cost of a schedule over a topology.
//
// Every message costs, per hop of its path, the link's latency plus its bytes over the link's
// bandwidth; messages that use the same link direction at overlapping times share its bandwidth
// equally. Ranks run their steps in order: a send departs at the sender's current time (sends do
// not block), a receive waits until its message has arrived. Local copies and reductions are free.
// A collective's time is when its last rank finishes: the schedule's critical path.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/schedule.hpp"
#include "tessera/topology.hpp"

namespace tessera::comm {

struct StepTiming {
  int rank;  // group rank
  size_t step;
  double start;
  double end;
};

struct CostEstimate {
  double seconds = 0.0;
  std::vector<int64_t> bytes_sent;  // per group rank
  std::vector<StepTiming> steps;    // send and receive steps, in schedule order per rank
  int64_t max_bytes_sent() const;
};

// members[i] is group rank i's global rank in `topology`.
CostEstimate estimate(const Schedule& schedule, const std::vector<int>& members, const Topology& topology,
                      size_t itemsize);

}  // namespace tessera::comm
