#include "observe/trace_recorder.hpp"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "observe/comm_events.hpp"
#include "observe/log.hpp"
#include "tessera/errors.hpp"
#include "tessera/observe.hpp"

namespace tessera {
namespace {

struct Recorder {
  std::mutex mutex;
  std::atomic<bool> active{false};  // read on every per-rank op: no lock
  std::string path;
  nlohmann::json events = nlohmann::json::array();
  std::map<int, double> clock;  // rank -> microseconds
  std::set<int> ranks_seen;

  void slice(int rank, const std::string& name, const std::string& category, double start_us, double duration_us,
             nlohmann::json args) {
    ranks_seen.insert(rank);
    events.push_back({{"name", name},
                      {"cat", category},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", rank},
                      {"ts", start_us},
                      {"dur", duration_us},
                      {"args", std::move(args)}});
  }
};

Recorder& recorder() {
  static auto* r = new Recorder();
  return *r;
}

// The file is opened before anything is recorded, so an unwritable path fails at start.
void check_writable(const std::string& path) {
  std::ofstream probe(path, std::ios::app);
  if (!probe)
    throw Error(fmt::format("trace: cannot write '{}' (missing directory or no permission); give a writable path",
                            path));
}

void write(Recorder& r) {
  nlohmann::json file;
  file["traceEvents"] = r.events;
  file["displayTimeUnit"] = "ns";
  for (int rank : r.ranks_seen)
    file["traceEvents"].push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", rank}, {"args", {{"name", fmt::format("rank {}", rank)}}}});
  file["traceEvents"].push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "tessera"}}}});
  std::ofstream out(r.path, std::ios::trunc);
  if (!out) throw Error(fmt::format("trace: cannot write '{}'", r.path));
  out << file.dump(1) << "\n";
}

}  // namespace

namespace observe {

bool trace_recorder_active() { return recorder().active.load(std::memory_order_relaxed); }

bool wants_rank_ops() { return trace_recorder_active(); }

void report_rank_op(const char* op, int rank, double seconds) {
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  if (!r.active) return;
  double& now = r.clock[rank];
  r.slice(rank, op, "op", now, seconds * 1e6, nlohmann::json::object());
  now += seconds * 1e6;
}

void trace_collective(const comm::Schedule& schedule, const std::vector<int>& members, const comm::CostEstimate& cost,
                      const std::string& caused_by) {
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  if (!r.active) return;
  double start = 0.0;
  for (int m : members) start = std::max(start, r.clock[m]);
  const std::string name = fmt::format("{} ({})", comm::collective_name(schedule.request.collective), schedule.algorithm);
  for (size_t i = 0; i < members.size(); ++i) {
    nlohmann::json args = {{"group", members},
                           {"group_rank", i},
                           {"bytes_sent", cost.bytes_sent[i]},
                           {"elements", schedule.request.count}};
    if (!caused_by.empty()) args["caused_by"] = caused_by;
    r.slice(members[i], name, "collective", start, cost.seconds * 1e6, args);
  }
  for (const comm::StepTiming& t : cost.steps) {
    const comm::Step& step = schedule.ranks[static_cast<size_t>(t.rank)].steps[t.step];
    const bool send = step.kind == comm::StepKind::Send;
    const int64_t bytes = step.chunk.count * static_cast<int64_t>(schedule.request.dtype.bits / 8);
    const int peer = members[static_cast<size_t>(step.peer)];
    r.slice(members[static_cast<size_t>(t.rank)], fmt::format("{} {} B {} rank {}", send ? "send" : "recv", bytes,
                                                             send ? "to" : "from", peer),
            "step", start + t.start * 1e6, std::max(0.001, (t.end - t.start) * 1e6),
            {{"bytes", bytes}, {"peer", peer}, {"step", t.step}});
  }
  for (int m : members) r.clock[m] = start + cost.seconds * 1e6;
}

}  // namespace observe

void start_trace(const std::string& path) {
  check_writable(path);
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  r.active = true;
  r.path = path;
  r.events = nlohmann::json::array();
  r.clock.clear();
  r.ranks_seen.clear();
}

void stop_trace() {
  Recorder& r = recorder();
  std::lock_guard lock(r.mutex);
  if (!r.active) return;
  r.active = false;
  write(r);
}

bool tracing() { return observe::trace_recorder_active(); }

}  // namespace tessera
