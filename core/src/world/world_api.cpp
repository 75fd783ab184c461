// ts::World and the PyTorch-style queries over the calling thread's world.
#include <fmt/format.h>

#include "tessera/errors.hpp"
#include "tessera/world.hpp"
#include "world/process_link.hpp"
#include "world/world.hpp"

namespace tessera {

namespace {

int checked_size(int size) {
  if (size < 1) throw Error(fmt::format("World: a world needs at least one rank, got {}", size));
  return size;
}

}  // namespace

World::World(int size) : state_(world::make_world(checked_size(size))) {}

World::World(std::shared_ptr<world::WorldState> state) : state_(std::move(state)) {}

// A thread's default world has no fixed size: it stands for rank 0's view, as outside any mode.
int World::size() const { return state_->sized() ? state_->size() : 1; }

RankSet World::ranks() const {
  if (!state_->sized()) return RankSet::range(1);
  return RankSet(state_->hosted_ranks());
}

int World::process_index() const { return state_->process_index(); }
int World::num_processes() const { return state_->process_count(); }
std::string World::transport() const {
  return state_->distributed() ? state_->link()->transport_name() : "local";
}
int World::ranks_per_process() const { return state_->distributed() ? state_->ranks_per_process() : size(); }

int World::process_of(int rank) const {
  if (rank < 0 || rank >= size())
    throw Error(fmt::format("World::process_of: rank {} is outside the world of {} rank(s) (0..{})", rank,
                            size(), size() - 1));
  return state_->process_of(rank);
}

World current_world() { return World(world::current_shared()); }

int get_world_size() { return current_world().size(); }

}  // namespace tessera
