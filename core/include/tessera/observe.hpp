// Seeing communication: counters (PyTorch: CommDebugMode) and Chrome/Perfetto traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

class Tensor;

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

// While alive, tracks the bytes of tensor storage each rank holds, by category, in the calling
// thread's world as CommCounter finds it (the world when it is made, with the LocalModes the
// thread opens inside it; never another thread's independent world). Counters nest; each sees the
// bytes allocated while it is alive (and those tag_memory brings in), not those made before it.
//
// What a rank holds is what it would hold on a cluster:
//   - a local tensor's shard counts for its rank (a DTensor's local tensor too), so uneven shards
//     give different ranks different bytes;
//   - identical shards sharing bytes copy-on-write (shared replicas) count for every rank holding
//     one, as each rank would hold its own copy;
//   - views of one storage count once, with the storage's whole size;
//   - a plain (dense) tensor made outside every LocalMode is the program's own and counts for the
//     rank get_rank() names there: rank 0 in a simulated world (in a process of a world spread over
//     processes, its first hosted rank); made inside a LocalMode (with the mode disabled, or for a
//     rank by the simulator), it counts once a local tensor holds it as a shard, for that rank;
//     made inside a rank's task (run_per_rank, a per-rank op), it counts for that rank at once.
// Bytes leave when the last handle to their storage dies, or when released (release_storage).
// Every peak and current figure is of the bytes held at one moment; peaks are per rank, and a
// figure asked for rank -1 is the largest over the ranks.
class MemoryCounter {
 public:
  struct Entry {
    std::string category;
    int64_t peak_bytes = 0;     // the largest over ranks of each rank's peak in this category
    int64_t current_bytes = 0;  // the largest over ranks
  };

  MemoryCounter();
  ~MemoryCounter();
  MemoryCounter(const MemoryCounter&) = delete;
  MemoryCounter& operator=(const MemoryCounter&) = delete;

  // `category` "" = all categories together (the peak of the total, not the sum of the peaks);
  // `rank` -1 = the largest over ranks, else that rank's (0 for a rank that held nothing). Throws
  // Error for a rank below -1.
  int64_t peak_bytes(const std::string& category = "", int rank = -1) const;
  int64_t current_bytes(const std::string& category = "", int rank = -1) const;
  // The ranks that held bytes while the counter was alive, ascending.
  std::vector<int> ranks() const;
  // One entry per category that held bytes: parameters, gradients, optimizer_state, activations
  // first (those that occur), then the others by name.
  std::vector<Entry> entries() const;
  // A printable table: one row per category (as entries()) and a total row, with the peak and
  // current bytes per rank (the largest over ranks).
  std::string table() const;
  // From now on each peak starts from the bytes held now.
  void reset_peak();

  struct State;

 private:
  State* state_;
};

// The category of bytes allocated on the calling thread while alive (and by the per-rank tasks its
// ops hand to other threads): "parameters", "gradients", "optimizer_state" or any label. Bytes
// allocated outside every scope are "activations". Scopes nest and restore the outer category.
class MemoryCategory {
 public:
  explicit MemoryCategory(std::string category);  // throws Error for an empty category
  ~MemoryCategory();
  MemoryCategory(const MemoryCategory&) = delete;
  MemoryCategory& operator=(const MemoryCategory&) = delete;

 private:
  std::string category_;
  const std::string* saved_;
};

// Moves the bytes of a tensor already made (every shard's, for a local tensor, for its rank) to
// `category` for the memory counters; its views and every handle to its storage move with it.
// Bytes allocated while no counter watched start being counted now, under `category`, by the
// counters alive in the calling thread's world. Throws Error for an empty category; an undefined
// tensor has no bytes and is left alone.
void tag_memory(const Tensor& t, const std::string& category);

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
  void close();  // stops recording and writes the file; throws Error on failure
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

  struct State;

 private:
  State* state_;
};

}  // namespace tessera
