// The world (PyTorch: the default process group's world): every rank of one program.
//
// A world is simulated (this process hosts all of its ranks: World(size)) or spread over processes
// (init_world() under mpirun: each process hosts some of the ranks). A world owns what one run
// shares and nothing another world can see: point-to-point messages, the comm counters and trace
// scopes that observe it, its topology and the paths computed on it. Two threads with their own
// LocalModes are two worlds; threads that should share one pass the same World to their modes.
//
// The calling thread's world is its innermost LocalMode's (also while the mode is disabled); a
// thread outside every mode is in the process world once init_world() has made it, and before that
// in a default world of its own (never shared with other threads), which holds rank 0's view
// (get_world_size() = 1) and in which a local tensor's collectives span its ranks. Per-rank work that an op
// hands to the thread pool runs in the issuing thread's world.
#pragma once

#include <memory>
#include <string>

#include "tessera/rank_map.hpp"
#include "tessera/sym_int.hpp"

namespace tessera {

namespace world {
class WorldState;
}

class World {
 public:
  // A simulated world of ranks 0..size-1, all hosted by this process; throws Error when size < 1.
  explicit World(int size);

  int size() const;
  RankSet ranks() const;  // the ranks this process hosts: all of them in a simulated world
  int process_index() const;
  int num_processes() const;
  std::string transport() const;   // "local" (simulated) or the transport's name ("mpi")
  int ranks_per_process() const;   // the world's size in a simulated world
  int process_of(int rank) const;  // the process hosting `rank`; throws Error outside 0..size-1

  bool operator==(const World& other) const { return state_ == other.state_; }

  // The implementation's handle (LocalMode binds it to a thread).
  explicit World(std::shared_ptr<world::WorldState> state);
  const std::shared_ptr<world::WorldState>& state() const { return state_; }

 private:
  std::shared_ptr<world::WorldState> state_;
};

// The calling thread's world (see above).
World current_world();

// The world of this process as configuration and launcher make it: under an MPI launcher
// (or [world] transport = "mpi"), a world of processes x ranks_per_process ranks over the transport;
// otherwise a simulated world of ranks_per_process ranks. Idempotent: every call returns the same
// world, which lives until the process exits (its transport is finalised then).
World init_world();
// PyTorch: dist.get_rank() -- inside a mode a local int {r: r} over its ranks; outside, 0 in a
// simulated world, and in a process of a distributed one its hosted ranks (an int when it hosts one).
SymInt get_rank();
// PyTorch: dist.get_world_size() -- the calling thread's world's size.
int get_world_size();

}  // namespace tessera
