// What watches a world, as the layers that report to it see it. The interface is declared below
// every layer that reports (the SPMD runner reports per-rank ops; comm extends it with collectives,
// comm/comm_observer.hpp) and implemented above them all, by observe, which installs the maker of
// each world's observer (world_slots.hpp, Slot::observer): the layers that report never name it.
#pragma once

namespace tessera::world {

class WorldState;

class Observer {
 public:
  virtual ~Observer() = default;
  // Whether a trace records per-rank ops (the runner then measures each one).
  virtual bool wants_rank_ops() = 0;
  // One rank's run of a per-rank op, measured.
  virtual void rank_op(const char* op, int rank, double seconds) = 0;
};

// `world`'s observer (made on first use); null while no observer maker is installed.
Observer* observer_of(WorldState& world);

}  // namespace tessera::world
