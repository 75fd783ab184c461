// How observe takes the reports of communication (comm/comm_observer.hpp, through each world's
// Listeners) and of per-rank ops: counters and the trace recorder listen. Cheap when nobody listens.
#pragma once

#include <string>
#include <vector>

#include "comm/cost_model.hpp"
#include "comm/schedule.hpp"

namespace tessera::observe {

// True when a counter or a trace wants collective reports (the caller then pays for a cost
// estimate).
bool wants_collectives();

// One fibre's run of a collective. Inside a comm::CollectiveCall the fibres of one API call are counted
// as one call (they run at the same time: the slowest fibre's time, the most bytes any rank sends);
// each fibre still gets its own trace slices.
void report_collective(const comm::Schedule& schedule, const std::vector<int>& members,
                       const comm::CostEstimate& cost);

// An API call begins on the calling thread (comm::CollectiveCall); false when one already runs
// there. end_collective_call() reports the outermost one, once.
bool begin_collective_call();
void end_collective_call();
void report_implicit(const std::string& op, int64_t input, const std::string& from, const std::string& to);
// A per-rank op measured in the simulator (for the trace).
void report_rank_op(const char* op, int rank, double seconds);
bool wants_rank_ops();

}  // namespace tessera::observe
