// The trace recorder behind start_trace/stop_trace: per-rank tracks on virtual clocks.
//
// Each rank's clock advances by the measured duration of its op slices; a collective starts when
// the last of its members is ready and its steps take the cost model's times, so the picture
// shows where ranks wait on each other.
#pragma once

#include <string>
#include <vector>

#include "comm/cost_model.hpp"
#include "comm/schedule.hpp"

namespace tessera::observe {

bool trace_recorder_active();
void trace_collective(const comm::Schedule& schedule, const std::vector<int>& members, const comm::CostEstimate& cost,
                      const std::string& caused_by);

}  // namespace tessera::observe
