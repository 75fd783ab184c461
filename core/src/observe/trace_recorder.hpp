// Trace recording: per-rank tracks on virtual clocks.
//
// Each rank's clock advances by the measured duration of its op slices; a collective starts when
// the last of its members is ready and its steps take the cost model's times, so the picture
// shows where ranks wait on each other.
//
// Two kinds of recorder: the program's trace (start_trace/stop_trace, TESSERA_TRACE, [trace] file)
// sees every world in the process, one trace process per set of listeners (a thread's worlds, or an
// explicit World); a TraceScope sees only the world that was current where it was made (and the
// worlds of modes opened from it).
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/cost_model.hpp"
#include "comm/schedule.hpp"

namespace tessera::observe {

class TraceRecorder {
 public:
  explicit TraceRecorder(std::string path);  // throws Error when the path cannot be written
  const std::string& path() const { return path_; }

  // `source` tells apart independent worlds (their listeners' id): each gets its own trace process.
  void rank_op(uint64_t source, const char* op, int rank, double seconds);
  void collective(uint64_t source, const comm::Schedule& schedule, const std::vector<int>& members,
                  const comm::CostEstimate& cost, const std::string& caused_by);
  void write();  // the whole file; throws Error when it cannot

 private:
  void slice(int pid, int rank, const std::string& name, const std::string& category, double start_us,
             double duration_us, nlohmann::json args);
  int pid_of(uint64_t source);

  std::mutex mutex_;
  std::string path_;
  nlohmann::json events_ = nlohmann::json::array();
  std::map<uint64_t, int> pids_;                 // source -> pid, in order of first appearance
  std::map<std::pair<int, int>, double> clock_;  // (pid, rank) -> microseconds
  std::set<std::pair<int, int>> tracks_;         // (pid, rank)
};

// True when the program's trace or a TraceScope on the calling thread's world records.
bool trace_recorder_active();
void trace_collective(const comm::Schedule& schedule, const std::vector<int>& members,
                      const comm::CostEstimate& cost, const std::string& caused_by);

}  // namespace tessera::observe
