// Seeing communication: counters (PyTorch: CommDebugMode) and Chrome/Perfetto traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

// While alive, counts every collective issued into its world: per collective and mesh dim, the
// calls, the bytes one rank sends (the most any rank of the group sends) and the time the cost
// model estimates over the topology; and which user op caused each implicit redistribution.
// Its world is the calling thread's when it is made (see tessera/world.hpp): the innermost
// LocalMode's, or the thread's own default world, together with the worlds of every LocalMode the
// thread opens inside it. Other threads' independent worlds are never counted. Counters may nest;
// each sees everything issued while it is alive.
class CommCounter {
 public:
  struct Entry {
    std::string collective;  // "all_reduce", ...
    std::string mesh_dim;    // the mesh dim's name (or "dim i"); "" outside DTensor code
    std::string algorithm;
    int64_t calls = 0;
    int64_t bytes_per_rank = 0;
    double seconds = 0.0;
  };
  struct Implicit {
    std::string op;    // the user op that needed the redistribution, e.g. "matmul"
    int64_t input;     // which input
    std::string from;  // placements, e.g. "S(0),R"
    std::string to;
  };

  CommCounter();
  ~CommCounter();
  CommCounter(const CommCounter&) = delete;
  CommCounter& operator=(const CommCounter&) = delete;

  std::vector<Entry> entries() const;
  std::vector<Implicit> implicit_redistributions() const;
  int64_t calls(const std::string& collective = "") const;  // "" = all
  int64_t bytes_per_rank() const;
  double seconds() const;
  // A printable table: one row per (collective, mesh dim, algorithm), then the implicit ones.
  std::string table() const;

  struct State;

 private:
  State* state_;
};

// Labels communication issued in a scope: the mesh dim it runs along and the op that caused it.
// DTensor code sets these; user code may too.
class CommLabel {
 public:
  CommLabel(std::string mesh_dim, std::string op = "");
  ~CommLabel();
  CommLabel(const CommLabel&) = delete;
  CommLabel& operator=(const CommLabel&) = delete;

 private:
  std::string saved_mesh_dim_;
  std::string saved_op_;
};

// Chrome/Perfetto trace (open it at https://ui.perfetto.dev): one track per rank; per-rank op
// slices (measured) and collective steps (timed by the cost model) with bytes and peers as
// arguments.
//
// The program's trace sees every world in the process (independent worlds, e.g. two threads'
// modes, are separate trace processes). It is started by TESSERA_TRACE=file.json or [trace] file in
// tessera.toml (written at exit), or in code with start_trace/stop_trace.
void start_trace(const std::string& path);  // throws Error when the path cannot be written or a
                                            // program trace is already running
void stop_trace();                          // writes the file; a no-op when not tracing
// The file the program's trace is being recorded to; "" when none is.
std::string trace_path();
// True when what the calling thread issues is being recorded (the program's trace or a TraceScope).
bool tracing();

// A trace of one scope, alongside the program's trace if there is one: it records what is issued
// into the calling thread's world (as CommCounter counts it) while it is alive, and writes the file
// when it ends. Two threads with their own TraceScopes and worlds write separate files.
class TraceScope {
 public:
  explicit TraceScope(const std::string& path);  // throws Error when the path cannot be written
  ~TraceScope();                                 // writes the file unless close() did (errors are logged)
  void close();                                  // stops recording and writes the file; throws Error on failure
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

  struct State;

 private:
  State* state_;
};

}  // namespace tessera
