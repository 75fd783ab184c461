// Seeing communication from Python: ts.CommCounter (PyTorch: CommDebugMode) and ts.CommLabel as
// context managers, and Chrome/Perfetto tracing (ts.start_trace / ts.stop_trace, `with ts.trace(path)`).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessera::python {
namespace {

using Entry = CommCounter::Entry;
using Implicit = CommCounter::Implicit;

// The C++ counter counts while it lives, so it is made at __enter__ and ended at __exit__; what it
// counted is kept, so that it can be read after the with-block (as CommDebugMode's results are).
class PyCommCounter {
 public:
  void enter() {
    if (live_)
      throw nb::value_error("CommCounter: already entered; use a new ts.CommCounter() for a nested count");
    live_ = std::make_unique<CommCounter>();
  }
  void exit() {
    if (!live_) return;
    entries_ = live_->entries();
    implicit_ = live_->implicit_redistributions();
    bytes_per_rank_ = live_->bytes_per_rank();
    seconds_ = live_->seconds();
    table_ = live_->table();
    calls_.clear();
    calls_[""] = live_->calls();
    for (const Entry& e : entries_) calls_[e.collective] = live_->calls(e.collective);
    live_.reset();
  }

  std::vector<Entry> entries() const { return live_ ? live_->entries() : entries_; }
  std::vector<Implicit> implicit() const { return live_ ? live_->implicit_redistributions() : implicit_; }
  int64_t calls(const std::string& collective) const {
    if (live_) return live_->calls(collective);
    const auto it = calls_.find(collective);
    return it == calls_.end() ? 0 : it->second;
  }
  int64_t bytes_per_rank() const { return live_ ? live_->bytes_per_rank() : bytes_per_rank_; }
  double seconds() const { return live_ ? live_->seconds() : seconds_; }
  std::string table() const { return live_ ? live_->table() : table_; }
  bool active() const { return live_ != nullptr; }

 private:
  std::unique_ptr<CommCounter> live_;
  std::vector<Entry> entries_;
  std::vector<Implicit> implicit_;
  std::map<std::string, int64_t> calls_;  // "" = every collective
  int64_t bytes_per_rank_ = 0;
  double seconds_ = 0.0;
  std::string table_;
};

// Calls per collective, as CommDebugMode.get_comm_counts() gives them (keyed by name here).
nb::dict comm_counts(const PyCommCounter& counter) {
  std::map<std::string, int64_t> counts;
  for (const Entry& e : counter.entries()) counts[e.collective] += e.calls;
  nb::dict out;
  for (const auto& [name, calls] : counts) out[nb::str(name.c_str())] = calls;
  return out;
}

// A label lives for its with-block: the C++ one restores the outer label when it ends.
struct PyCommLabel {
  std::string mesh_dim;
  std::string op;
  std::unique_ptr<CommLabel> live;
};

struct PyTrace {
  std::string path;
  std::unique_ptr<TraceScope> live;
};

}  // namespace

void bind_observe(nb::module_& m) {
  nb::class_<Entry>(m, "CommEntry",
                    "One row of a ts.CommCounter: a collective along a mesh dim by one algorithm.")
      .def_ro("collective", &Entry::collective)
      .def_ro("mesh_dim", &Entry::mesh_dim, "The mesh dim's name (or 'dim i'); '' outside DTensor code.")
      .def_ro("algorithm", &Entry::algorithm)
      .def_ro("calls", &Entry::calls)
      .def_ro("bytes_per_rank", &Entry::bytes_per_rank, "The most bytes any rank of the group sent.")
      .def_ro("seconds", &Entry::seconds, "The time the cost model estimates over the topology.")
      .def("__repr__", [](const Entry& e) {
        return "CommEntry(collective='" + e.collective + "', mesh_dim='" + e.mesh_dim + "', algorithm='" +
               e.algorithm + "', calls=" + std::to_string(e.calls) +
               ", bytes_per_rank=" + std::to_string(e.bytes_per_rank) + ")";
      });
  nb::class_<Implicit>(m, "ImplicitRedistribution",
                       "A redistribution an op did because its inputs fit no rule.")
      .def_ro("op", &Implicit::op)
      .def_ro("input", &Implicit::input)
      .def_ro("from_placements", &Implicit::from, "e.g. 'S(0),R'")
      .def_ro("to_placements", &Implicit::to)
      .def("__repr__", [](const Implicit& i) {
        return "ImplicitRedistribution(op='" + i.op + "', input=" + std::to_string(i.input) + ", from='" +
               i.from + "', to='" + i.to + "')";
      });

  nb::class_<PyCommCounter>(
      m, "CommCounter",
      "with ts.CommCounter() as c: counts every collective issued in the block (PyTorch: "
      "CommDebugMode); the counts stay readable after it.")
      .def(nb::init<>())
      .def(
          "__enter__",
          [](PyCommCounter& c) -> PyCommCounter& {
            c.enter();
            return c;
          },
          nb::rv_policy::reference)
      .def("__exit__", [](PyCommCounter& c, nb::args) { c.exit(); })
      .def("calls", &PyCommCounter::calls, nb::arg("collective") = "",
           "Calls of one collective (e.g. 'all_gather'), or of every one.")
      .def("bytes_per_rank", &PyCommCounter::bytes_per_rank,
           "The bytes sent by the busiest rank of each collective, summed over the collectives counted.")
      .def("seconds", &PyCommCounter::seconds,
           "The time the cost model estimates for the collectives counted, over the topology in force.")
      .def_prop_ro("entries", &PyCommCounter::entries)
      .def_prop_ro("implicit_redistributions", &PyCommCounter::implicit)
      .def("table", &PyCommCounter::table,
           "A text table of the counts: one row per collective, mesh dim and algorithm, then the implicit "
           "redistributions.")
      .def_prop_ro("active", &PyCommCounter::active, "True inside the with-block.")
      // CommDebugMode's spellings
      .def(
          "get_total_counts", [](const PyCommCounter& c) { return c.calls(""); },
          "Calls of every collective together (CommDebugMode's name for calls()).")
      .def("get_comm_counts", &comm_counts, "Calls per collective name: {'all_gather': 1, ...}.")
      .def(
          "generate_comm_debug_tracing_table",
          [](const PyCommCounter& c, int noise_level) {
            (void)noise_level;  // one level of detail: every row
            return c.table();
          },
          nb::arg("noise_level") = 3,
          "The table() text (CommDebugMode's name); every noise_level gives every row.")
      .def("__repr__", [](const PyCommCounter& c) {
        return "CommCounter(calls=" + std::to_string(c.calls("")) +
               ", bytes_per_rank=" + std::to_string(c.bytes_per_rank()) + (c.active() ? ", active" : "") +
               ")";
      });

  nb::class_<PyCommLabel>(
      m, "CommLabel",
      "with ts.CommLabel('tp', op='my_op'): communication in the block is counted and traced "
      "under that mesh dim and op.")
      .def(
          "__init__",
          [](PyCommLabel* self, std::string mesh_dim, std::string op) {
            new (self) PyCommLabel{std::move(mesh_dim), std::move(op), nullptr};
          },
          nb::arg("mesh_dim"), nb::arg("op") = "")
      .def(
          "__enter__",
          [](PyCommLabel& l) -> PyCommLabel& {
            l.live = std::make_unique<CommLabel>(l.mesh_dim, l.op);
            return l;
          },
          nb::rv_policy::reference)
      .def("__exit__", [](PyCommLabel& l, nb::args) { l.live.reset(); });

  nb::class_<PyTrace>(
      m, "trace",
      "with ts.trace('out.json'): a Chrome/Perfetto trace of what the block issues, written when it "
      "ends (open it at https://ui.perfetto.dev).")
      .def(
          "__init__",
          [](PyTrace* self, std::string path) {
            new (self) PyTrace{std::move(path), nullptr};
          },
          nb::arg("path"))
      .def(
          "__enter__",
          [](PyTrace& t) -> PyTrace& {
            if (t.live) throw nb::value_error(("ts.trace('" + t.path + "'): already recording").c_str());
            t.live = std::make_unique<TraceScope>(t.path);
            return t;
          },
          nb::rv_policy::reference)
      .def("__exit__",
           [](PyTrace& t, nb::args) {
             if (!t.live) return;
             std::unique_ptr<TraceScope> scope = std::move(t.live);
             without_gil([&] { scope->close(); });  // writes the file; an error here reaches the caller
           })
      .def_ro("path", &PyTrace::path);

  m.def(
      "start_trace", [](const std::string& path) { start_trace(path); }, nb::arg("path"),
      "Records the program's trace (every world) until ts.stop_trace() writes it to `path`.");
  m.def(
      "stop_trace", [] { without_gil([] { stop_trace(); }); },
      "Writes the program's trace; a no-op when not tracing.");
  m.def("trace_path", &trace_path, "The file the program's trace is being recorded to; '' when none is.");
  m.def("tracing", &tracing, "True when what this thread issues is being recorded.");
}

}  // namespace tessera::python
