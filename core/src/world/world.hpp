// The world a call runs in (docs/multi-process.md): what one run of a program shares, and nothing that
// another world in the same process can see.
//
// A world owns its size, its topology with the paths and ring orders computed on it, and the slots
// in which the layers above keep their per-world state (world_slots.hpp: comm's point-to-point
// mailbox, observe's listeners: the comm counters and trace scopes that observe it). Configuration
// (algorithm rules, thread count, the topology preset) stays process-wide.
//
// How code finds its world (world::current()): the world bound last on the calling thread. A
// LocalMode binds its world for its lifetime (DisabledLocalMode scopes do not unbind it, so ops and
// collectives on existing local tensors still go to the mode's world); a rank task run on a pool
// thread binds the world of the thread that issued the op (see run_ranks). A thread with nothing
// bound is in its own default world, created on first use and never shared with another thread.
//
// Listeners: a world made by `LocalMode(n)` without an explicit World shares the listeners (the
// shared slots) of the world that was current where it was made, so a CommCounter or TraceScope
// sees the modes its thread opens inside it. An explicit ts::World has listeners of its own;
// threads that share it deliberately share them too.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/topology.hpp"
#include "world/world_slots.hpp"

namespace tessera::comm {
class RankPrograms;
}

namespace tessera::world {

class ProcessLink;

class WorldState : public std::enable_shared_from_this<WorldState> {
 public:
  // size 0: a thread's default world, which has no fixed size: each collective's topology spans
  // its tensor's ranks (one more than the largest).
  // `shared_slots`: those of the world it is made inside (null: a table of its own).
  WorldState(int size, std::shared_ptr<SlotTable> shared_slots);
  // A world spread over the processes `link` joins, `ranks_per_process` ranks each: process p
  // hosts ranks p*k .. p*k+k-1. `check_collectives`: compare every collective call's
  // fingerprint across processes before running it.
  WorldState(std::shared_ptr<ProcessLink> link, int ranks_per_process, bool check_collectives);
  // A world over the same processes and link as `spread` (a distributed world), sharing
  // `shared_slots` (null: a table of its own), whose collective calls are compared across processes
  // by its caller rather than by each call (a ts::spawn across processes, whose scheduler agrees on
  // every collective that spans processes before any runs, and whose collectives within one process
  // involve no other).
  WorldState(const WorldState& spread, std::shared_ptr<SlotTable> shared_slots);
  ~WorldState();
  WorldState(const WorldState&) = delete;
  WorldState& operator=(const WorldState&) = delete;

  int size() const { return size_; }  // 0 for a thread's default world
  bool sized() const { return size_ > 0; }

  // Where ranks live. A simulated world hosts every rank; a distributed one only its process's.
  bool distributed() const { return link_ != nullptr; }
  ProcessLink* link() const { return link_.get(); }
  int ranks_per_process() const { return ranks_per_process_; }
  int process_index() const;
  int process_count() const;
  bool hosts(int rank) const { return !distributed() || process_of(rank) == process_index(); }
  int process_of(int rank) const { return distributed() ? rank / ranks_per_process_ : 0; }
  int position(int rank) const {
    return distributed() ? rank % ranks_per_process_ : rank;
  }                                       // within its process
  std::vector<int> hosted_ranks() const;  // empty for a thread's default world
  // One fibre of every rank 0 .. size-1: the default group's fibres, made once (a collective on the
  // default group asks on every call). Null for a thread's default world.
  using FibreList = std::vector<std::vector<int>>;
  const std::shared_ptr<const FibreList>& whole_world() const { return whole_world_; }
  // Checks on: payload checksums in every message between processes, and (unless the world's
  // caller compares calls itself) every collective call's fingerprint compared across processes.
  bool check_collectives() const { return check_collectives_; }
  bool compares_calls() const { return check_collectives_ && !calls_compared_by_caller_; }
  // The sequence number of the next collective call (every process counts the same calls).
  uint64_t next_call() { return calls_++; }
  // Makes `sequence` the next call's number: a caller that agrees on the numbers of calls across
  // processes itself (a spawn's scheduler: a collective within one process is numbered by that
  // process alone).
  void number_next_call(uint64_t sequence) { calls_.store(sequence); }

  // A slot's value (world_slots.hpp), from the table the slot lives in. The owning layer passes its
  // `make` (it always knows how); other layers pass none and get what the installed maker makes, or
  // null while none is installed.
  void* slot(Slot slot, SlotMaker make = nullptr) { return slots_for(slot).find_or_make(slot, make); }
  std::shared_ptr<void> shared_slot(Slot slot, SlotMaker make = nullptr) {
    return slots_for(slot).shared(slot, make);
  }
  // The slots this world shares with the worlds made inside it: pass them to their constructors.
  const std::shared_ptr<SlotTable>& shared_slots() const { return shared_slots_; }

  // The default topology ([topology] preset) over `ranks` ranks (the world's size when it has one),
  // built once per preset and kept with the paths computed on it. In a world spread over processes
  // whose transport reports its links' latency or bandwidth (SDK 1.5), the links between processes
  // take those (process_topology.hpp).
  Topology topology(int ranks);
  // What, besides the preset and the size, the world's topology rests on: 0 unless the transport
  // costs the links between processes, else a digest of how (for caches of choices made on it).
  uint64_t links_key() const { return links_key_; }
  // The members' positions round that topology's ring, as group ranks; empty for the natural order.
  std::vector<int32_t> ring_order(int ranks, const std::vector<int>& members);
  // The same, also setting `topology` to the topology it is taken from: a collective needs both,
  // and this takes the world's lock once.
  std::vector<int32_t> ring_order(int ranks, const std::vector<int>& members, Topology& topology);
  // The members' ring order on a topology a group brings of its own (ProcessGroup::topology, from
  // DeviceMesh::with_topology), as group ranks; empty for the natural order. Kept per topology
  // content (Topology::fingerprint), so a mesh's groups, copies of the mesh and equal topologies
  // built again all reuse one computation.
  std::vector<int32_t> ring_order_on(const Topology& topology, const std::vector<int>& members);

  // What a layer above keeps per world without this layer knowing its type (the checkpoint
  // layer's async save that awaits its commit), by key. `kept` is null when nothing is kept under
  // `key`; `keep` replaces it (null: keeps nothing) and returns what was kept before.
  std::shared_ptr<void> kept(const std::string& key) const;
  std::shared_ptr<void> keep(const std::string& key, std::shared_ptr<void> value);

 private:
  struct Built {
    Topology topology;
    std::map<std::vector<int>, std::vector<int32_t>> rings;  // members -> ring order
  };
  Built& built_locked(int ranks);
  SlotTable& slots_for(Slot slot) { return shared_with_inner_worlds(slot) ? *shared_slots_ : own_slots_; }

  const int size_;
  std::shared_ptr<ProcessLink> link_;
  int ranks_per_process_ = 0;
  bool check_collectives_ = false;
  bool calls_compared_by_caller_ = false;
  uint64_t links_key_ = 0;
  std::atomic<uint64_t> calls_{0};
  std::shared_ptr<const FibreList> whole_world_;
  SlotTable own_slots_;
  std::shared_ptr<SlotTable> shared_slots_;
  std::mutex topology_mutex_;
  std::map<std::pair<std::string, int>, Built> topologies_;  // (preset, ranks)
  std::map<uint64_t, Built> given_topologies_;               // groups' own, by fingerprint
  mutable std::mutex kept_mutex_;
  // Declared last, so destroyed first: what it holds may still wait on work of this world.
  std::map<std::string, std::shared_ptr<void>> kept_;
};

// A simulated world of `size` ranks, sharing `shared_slots` (the listeners of the world it is made
// inside); without them it gets a table of its own.
std::shared_ptr<WorldState> make_world(int size, std::shared_ptr<SlotTable> shared_slots = nullptr);

// The calling thread's world (see above). Never null. Once init_world() has made the process
// world, a thread with nothing bound is in it (not in a default world of its own): after that the
// process is a member of that world, whatever thread asks.
WorldState& current();
// init_world() hands over the process world once; it stays alive until the process exits.
void adopt_process_world(WorldState* world);
std::shared_ptr<WorldState> current_shared();

// Binds a world to the calling thread for a scope; scopes nest and unbind in reverse order. The
// caller keeps the world alive while it is bound.
void bind(WorldState* world);
void unbind(WorldState* world);

// A program run once per rank on coroutines of one thread (ts::spawn): the rank whose program the
// thread runs now, in which world, and the scheduler that its collectives and messages go to.
struct RunningProgram {
  WorldState* world = nullptr;
  int rank = -1;
  comm::RankPrograms* programs = nullptr;
};
// The program the calling thread runs, when its current world is that program's world (a rank that
// opens a LocalMode is in the mode's world for its scope); null otherwise.
const RunningProgram* running_program();
// Whether the calling code holds rank `rank`'s values (its shard of a local tensor, of a DTensor):
// inside a rank's program only that rank's, as a torchrun process holds its own; elsewhere the
// ranks the current world hosts (every rank of a simulated world).
bool holds_rank(int rank);

// Everything that binds worlds and programs to a thread, as a value: a coroutine that runs a rank's
// program carries its own while suspended, and the scheduler exchanges it with the thread's on
// every switch, so that one rank's scopes never leak into another's.
struct ThreadBindings {
  std::vector<WorldState*> bound;
  // bound's last entry (null when none), carried along: an exchange then reads no rank's vector.
  WorldState* innermost = nullptr;
  RunningProgram program;

  // `world` bound alone.
  void bind_only(WorldState* world) {
    bound = {world};
    innermost = world;
  }
};
// Where the calling thread keeps its bindings: its thread-local variables' addresses, fixed for
// the thread's life. The scheduler of a spawn exchanges bindings at every switch between ranks on
// one thread, so it looks them up once (in a shared object each lookup is a call).
struct ThreadBindingsAt {
  std::vector<WorldState*>* bound = nullptr;
  WorldState** innermost = nullptr;  // bound's last entry (null when none), as current() reads it
  RunningProgram* program = nullptr;
};
ThreadBindingsAt thread_bindings_at();
// Swaps the bindings at `here` (the calling thread's) with `other`.
inline void exchange_thread_bindings(const ThreadBindingsAt& here, ThreadBindings& other) {
  here.bound->swap(other.bound);
  std::swap(*here.innermost, other.innermost);
  std::swap(*here.program, other.program);
}

class Bound {
 public:
  explicit Bound(WorldState* world) : world_(world) { bind(world_); }
  ~Bound() { unbind(world_); }
  Bound(const Bound&) = delete;
  Bound& operator=(const Bound&) = delete;

 private:
  WorldState* world_;
};

}  // namespace tessera::world
