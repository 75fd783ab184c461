// CommCounter: collective reports aggregated per (collective, mesh dim, algorithm).
#include <algorithm>
#include <atomic>
#include <memory>
#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "observe/comm_events.hpp"
#include "observe/listeners.hpp"
#include "comm/labels.hpp"
#include "observe/trace_recorder.hpp"
#include "tessera/observe.hpp"
#include "tessera/sdk/cpp/thread_local_address.hpp"
#include "world/world.hpp"

namespace tessera {

struct CommCounter::State {
  std::shared_ptr<observe::Listeners> listeners;  // its mutex guards what follows
  std::map<std::tuple<std::string, std::string, std::string>, Entry> entries;
  std::vector<Implicit> implicit;
};

namespace {

// The fibres of the API call in progress on this thread, merged into one report.
struct PendingCall {
  bool any = false;
  std::string collective;
  std::string algorithm;
  std::string mesh_dim;
  int64_t bytes_per_rank = 0;
  double seconds = 0.0;
};
thread_local PendingCall* pending_call = nullptr;
// What pending_call points at: one per thread, reused by every outermost call (no allocation per
// collective).
thread_local PendingCall pending_storage;

void count(const std::string& collective, const std::string& mesh_dim, const std::string& algorithm,
           int64_t bytes, double seconds) {
  observe::Listeners& listeners = observe::listeners_of(world::current());
  if (listeners.live_counters.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(listeners.mutex);
  for (CommCounter::State* state : listeners.counters) {
    CommCounter::Entry& e = state->entries[{collective, mesh_dim, algorithm}];
    e.collective = collective;
    e.mesh_dim = mesh_dim;
    e.algorithm = algorithm;
    e.calls += 1;
    e.bytes_per_rank += bytes;
    e.seconds += seconds;
  }
}

}  // namespace

namespace observe {

bool wants_collectives() {
  return observe::listeners_of(world::current()).live_counters.load(std::memory_order_relaxed) > 0 ||
         trace_recorder_active();
}

void report_collective(const comm::Schedule& schedule, const std::vector<int>& members,
                       const comm::CostEstimate& cost) {
  const std::string collective = comm::collective_name(schedule.request.collective);
  trace_collective(schedule, members, cost, comm::current_op());
  if (pending_call == nullptr)
    return count(collective, comm::current_mesh_dim(), schedule.algorithm, cost.max_bytes_sent(),
                 cost.seconds);
  PendingCall& call = *pending_call;
  if (!call.any) call = {true, collective, schedule.algorithm, comm::current_mesh_dim(), 0, 0.0};
  call.bytes_per_rank = std::max(call.bytes_per_rank, cost.max_bytes_sent());
  call.seconds = std::max(call.seconds, cost.seconds);
}

bool begin_collective_call() {
  PendingCall*& pending = sdk::thread_local_address(pending_call);  // one TLS call, not three
  if (pending != nullptr) return false;
  PendingCall& storage = pending_storage;
  storage.any = false;
  pending = &storage;
  return true;
}

void end_collective_call() {
  // Nested calls (a collective built from another) merge into the outermost, which alone ends here.
  PendingCall*& pending = sdk::thread_local_address(pending_call);
  PendingCall* call = pending;
  pending = nullptr;
  if (call->any)
    count(call->collective, call->mesh_dim, call->algorithm, call->bytes_per_rank, call->seconds);
}

void report_implicit(const std::string& op, int64_t input, const std::string& from, const std::string& to) {
  observe::Listeners& listeners = observe::listeners_of(world::current());
  std::lock_guard lock(listeners.mutex);
  for (CommCounter::State* state : listeners.counters) state->implicit.push_back({op, input, from, to});
}

}  // namespace observe

CommCounter::CommCounter() : state_(new State{observe::shared_listeners_of(world::current()), {}, {}}) {
  state_->listeners->add(state_);
}

CommCounter::~CommCounter() {
  state_->listeners->remove(state_);
  delete state_;
}

std::vector<CommCounter::Entry> CommCounter::entries() const {
  std::lock_guard lock(state_->listeners->mutex);
  std::vector<Entry> result;
  for (const auto& [key, entry] : state_->entries) result.push_back(entry);
  return result;
}

std::vector<CommCounter::Implicit> CommCounter::implicit_redistributions() const {
  std::lock_guard lock(state_->listeners->mutex);
  return state_->implicit;
}

int64_t CommCounter::calls(const std::string& collective) const {
  int64_t n = 0;
  for (const Entry& e : entries())
    if (collective.empty() || e.collective == collective) n += e.calls;
  return n;
}

int64_t CommCounter::bytes_per_rank() const {
  int64_t n = 0;
  for (const Entry& e : entries()) n += e.bytes_per_rank;
  return n;
}

double CommCounter::seconds() const {
  double t = 0.0;
  for (const Entry& e : entries()) t += e.seconds;
  return t;
}

std::string CommCounter::table() const {
  const std::vector<Entry> rows = entries();
  std::vector<std::vector<std::string>> cells = {
      {"collective", "mesh dim", "algorithm", "calls", "bytes/rank", "est. time"}};
  for (const Entry& e : rows)
    cells.push_back({e.collective, e.mesh_dim.empty() ? "-" : e.mesh_dim, e.algorithm,
                     std::to_string(e.calls), std::to_string(e.bytes_per_rank),
                     fmt::format("{:.3f} us", e.seconds * 1e6)});
  cells.push_back({"total", "", "", std::to_string(calls()), std::to_string(bytes_per_rank()),
                   fmt::format("{:.3f} us", seconds() * 1e6)});
  std::vector<size_t> widths(cells.front().size(), 0);
  for (const auto& line : cells)
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  std::string out;
  for (const auto& line : cells) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i)
      text +=
          i < 3 ? fmt::format("{:<{}}  ", line[i], widths[i]) : fmt::format("{:>{}}  ", line[i], widths[i]);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  const std::vector<Implicit> implicit = implicit_redistributions();
  if (!implicit.empty()) {
    out += "implicit redistributions:\n";
    for (const Implicit& i : implicit)
      out += fmt::format("  {} input {}: {} -> {}\n", i.op, i.input, i.from, i.to);
  }
  return out;
}

// The public face of comm's labels (comm/labels.hpp), which the layers below observe set directly.
CommLabel::CommLabel(std::string mesh_dim, std::string op)
    : saved_mesh_dim_(comm::current_mesh_dim()), saved_op_(comm::current_op()) {
  comm::set_labels(std::move(mesh_dim), std::move(op));
}

CommLabel::~CommLabel() { comm::restore_labels(saved_mesh_dim_, saved_op_); }

}  // namespace tessera
