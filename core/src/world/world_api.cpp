// ts::World and the PyTorch-style queries over the calling thread's world.
#include <fmt/format.h>

#include "tessera/errors.hpp"
#include "tessera/world.hpp"
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

RankSet World::ranks() const { return RankSet::range(size()); }

World current_world() { return World(world::current_shared()); }

int get_world_size() { return current_world().size(); }

}  // namespace tessera
