#include "observe/trace_recorder.hpp"

#include <atomic>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "observe/comm_events.hpp"
#include "observe/listeners.hpp"
#include "log/log.hpp"
#include "tessera/errors.hpp"
#include "tessera/observe.hpp"
#include "world/world.hpp"

namespace tessera {
namespace observe {
namespace {

// The file is opened before anything is recorded, so an unwritable path fails at start.
void check_writable(const std::string& path) {
  std::ofstream probe(path, std::ios::app);
  if (!probe)
    throw Error(fmt::format(
        "trace: cannot write '{}' (missing directory or no permission); give a writable path", path));
}

// The program's trace: configuration (TESSERA_TRACE, [trace] file) or start_trace starts it, so it
// is process-wide by design, and it sees every world.
struct ProgramTrace {
  std::mutex mutex;
  std::unique_ptr<TraceRecorder> recorder;
  std::atomic<bool> active{false};  // read on every per-rank op: no lock
};

ProgramTrace& program_trace() {
  static auto* trace = new ProgramTrace();  // outlives static tensors and the exit-time write
  return *trace;
}

bool program_trace_active() { return program_trace().active.load(std::memory_order_relaxed); }

// Calls f(recorder) for every recorder that sees what the calling thread issues, with its source.
template <class F>
void each_recorder(F&& f) {
  Listeners& listeners = observe::listeners_of(world::current());
  if (program_trace_active()) {
    ProgramTrace& program = program_trace();
    std::lock_guard lock(program.mutex);
    if (program.recorder) f(*program.recorder, listeners.id);
  }
  if (listeners.live_recorders.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(listeners.mutex);
  for (TraceRecorder* recorder : listeners.recorders) f(*recorder, listeners.id);
}

}  // namespace

TraceRecorder::TraceRecorder(std::string path) : path_(std::move(path)) { check_writable(path_); }

int TraceRecorder::pid_of(uint64_t source) {
  return pids_.try_emplace(source, static_cast<int>(pids_.size())).first->second;
}

void TraceRecorder::slice(int pid, int rank, const std::string& name, const std::string& category,
                          double start_us, double duration_us, nlohmann::json args) {
  tracks_.insert({pid, rank});
  events_.push_back({{"name", name},
                     {"cat", category},
                     {"ph", "X"},
                     {"pid", pid},
                     {"tid", rank},
                     {"ts", start_us},
                     {"dur", duration_us},
                     {"args", std::move(args)}});
}

void TraceRecorder::rank_op(uint64_t source, const char* op, int rank, double seconds) {
  std::lock_guard lock(mutex_);
  const int pid = pid_of(source);
  double& now = clock_[{pid, rank}];
  slice(pid, rank, op, "op", now, seconds * 1e6, nlohmann::json::object());
  now += seconds * 1e6;
}

void TraceRecorder::collective(uint64_t source, const comm::Schedule& schedule,
                               const std::vector<int>& members, const comm::CostEstimate& cost,
                               const std::string& caused_by) {
  std::lock_guard lock(mutex_);
  const int pid = pid_of(source);
  double start = 0.0;
  for (int m : members) start = std::max(start, clock_[{pid, m}]);
  const std::string name =
      fmt::format("{} ({})", comm::collective_name(schedule.request.collective), schedule.algorithm);
  for (size_t i = 0; i < members.size(); ++i) {
    nlohmann::json args = {{"group", members},
                           {"group_rank", i},
                           {"bytes_sent", cost.bytes_sent[i]},
                           {"elements", schedule.request.count}};
    if (!caused_by.empty()) args["caused_by"] = caused_by;
    slice(pid, members[i], name, "collective", start, cost.seconds * 1e6, args);
  }
  for (const comm::StepTiming& t : cost.steps) {
    const comm::Step& step = schedule.ranks[static_cast<size_t>(t.rank)].steps[t.step];
    const bool send = step.kind == comm::StepKind::Send;
    const int64_t bytes = step.chunk.count * static_cast<int64_t>(schedule.request.dtype.bits / 8);
    const int peer = members[static_cast<size_t>(step.peer)];
    slice(pid, members[static_cast<size_t>(t.rank)],
          fmt::format("{} {} B {} rank {}", send ? "send" : "recv", bytes, send ? "to" : "from", peer),
          "step", start + t.start * 1e6, std::max(0.001, (t.end - t.start) * 1e6),
          {{"bytes", bytes}, {"peer", peer}, {"step", t.step}});
  }
  for (int m : members) clock_[{pid, m}] = start + cost.seconds * 1e6;
}

void TraceRecorder::write() {
  std::lock_guard lock(mutex_);
  nlohmann::json file;
  file["traceEvents"] = events_;
  file["displayTimeUnit"] = "ns";
  for (const auto& [pid, rank] : tracks_)
    file["traceEvents"].push_back({{"name", "thread_name"},
                                   {"ph", "M"},
                                   {"pid", pid},
                                   {"tid", rank},
                                   {"args", {{"name", fmt::format("rank {}", rank)}}}});
  for (const auto& [source, pid] : pids_)
    file["traceEvents"].push_back(
        {{"name", "process_name"},
         {"ph", "M"},
         {"pid", pid},
         {"args", {{"name", pid == 0 ? std::string("tessera") : fmt::format("tessera (world {})", pid)}}}});
  if (pids_.empty())
    file["traceEvents"].push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "tessera"}}}});
  std::ofstream out(path_, std::ios::trunc);
  if (!out) throw Error(fmt::format("trace: cannot write '{}'", path_));
  out << file.dump(1) << "\n";
  if (!out.flush()) throw Error(fmt::format("trace: cannot write '{}'", path_));
}

bool trace_recorder_active() {
  return program_trace_active() ||
         observe::listeners_of(world::current()).live_recorders.load(std::memory_order_relaxed) > 0;
}

bool wants_rank_ops() { return trace_recorder_active(); }

void report_rank_op(const char* op, int rank, double seconds) {
  each_recorder([&](TraceRecorder& r, uint64_t source) { r.rank_op(source, op, rank, seconds); });
}

void trace_collective(const comm::Schedule& schedule, const std::vector<int>& members,
                      const comm::CostEstimate& cost, const std::string& caused_by) {
  each_recorder(
      [&](TraceRecorder& r, uint64_t source) { r.collective(source, schedule, members, cost, caused_by); });
}

}  // namespace observe

void start_trace(const std::string& path) {
  observe::ProgramTrace& program = observe::program_trace();
  std::lock_guard lock(program.mutex);
  // Replacing a running trace would leave its file empty (TESSERA_TRACE, [trace] file): refuse.
  if (program.recorder)
    throw Error(
        fmt::format("trace: the program's trace is already being recorded to '{}', so '{}' cannot start; "
                    "stop it first, or record a scope with TraceScope",
                    program.recorder->path(), path));
  program.recorder = std::make_unique<observe::TraceRecorder>(path);
  program.active = true;
}

void stop_trace() {
  observe::ProgramTrace& program = observe::program_trace();
  std::unique_ptr<observe::TraceRecorder> recorder;
  {
    std::lock_guard lock(program.mutex);
    program.active = false;
    recorder = std::move(program.recorder);
  }
  if (recorder) recorder->write();
}

std::string trace_path() {
  observe::ProgramTrace& program = observe::program_trace();
  std::lock_guard lock(program.mutex);
  return program.recorder ? program.recorder->path() : std::string();
}

bool tracing() { return observe::trace_recorder_active(); }

struct TraceScope::State {
  std::shared_ptr<observe::Listeners> listeners;
  observe::TraceRecorder recorder;
  bool closed = false;
};

TraceScope::TraceScope(const std::string& path)
    : state_(new State{observe::shared_listeners_of(world::current()), observe::TraceRecorder(path)}) {
  state_->listeners->add(&state_->recorder);
}

void TraceScope::close() {
  if (state_->closed) return;
  state_->closed = true;
  state_->listeners->remove(&state_->recorder);
  state_->recorder.write();
}

TraceScope::~TraceScope() {
  try {
    close();
  } catch (const std::exception& e) {  // a destructor must not throw: say so instead
    observe::logger().error("{}", e.what());
  }
  delete state_;
}

}  // namespace tessera
