// LocalMode: a per-thread stack of modes consulted by the factories.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "ranks/local_mode_stack.hpp"
#include "tensor/local_factories.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"
#include "world/world.hpp"

namespace tessera {
namespace {

// nullptr entries are disabled scopes; the innermost entry decides.
thread_local std::vector<LocalMode*> mode_stack;

void pop(const void* expected) {
  if (mode_stack.empty() || static_cast<const void*>(mode_stack.back()) != expected) {
    // Scopes are RAII objects, so this only happens when one is moved to another thread or
    // destroyed out of order; there is no way to recover the stack from that.
    std::fprintf(stderr, "tessera: local mode scopes destroyed out of order\n");
    std::abort();
  }
  mode_stack.pop_back();
}

}  // namespace

DisabledLocalMode::DisabledLocalMode() { mode_stack.push_back(nullptr); }

bool detail::inside_local_mode() {
  for (const LocalMode* mode : mode_stack)
    if (mode != nullptr) return true;
  return false;
}
DisabledLocalMode::~DisabledLocalMode() { pop(nullptr); }

detail::PlainFactories::PlainFactories() { mode_stack.push_back(nullptr); }
detail::PlainFactories::~PlainFactories() { pop(nullptr); }

std::vector<LocalMode*>& detail::thread_mode_stack() { return mode_stack; }

namespace {

// The new world of a mode given by its ranks: every rank up to the largest, sharing the slots (the
// listeners that observe it) of the world the mode is opened in.
std::shared_ptr<world::WorldState> world_for(const RankSet& ranks) {
  if (ranks.empty()) throw Error("LocalMode needs at least one rank, got an empty rank set");
  if (ranks.ranks().front() < 0)
    throw Error(fmt::format("LocalMode: rank {} is negative; ranks are 0 or more", ranks.ranks().front()));
  const int largest = ranks.ranks().back();
  if (largest == std::numeric_limits<int>::max())
    throw Error(
        fmt::format("LocalMode: rank {} leaves no room for a world of largest rank + 1 ranks", largest));
  return world::make_world(largest + 1, world::current().shared_slots());
}

}  // namespace

LocalMode::LocalMode(int num_ranks) : LocalMode(RankSet::range(num_ranks)) {}

LocalMode::LocalMode(const RankSet& ranks) : LocalMode(ranks, world_for(ranks)) {}

LocalMode::LocalMode(const World& world) : LocalMode(world.ranks(), world.state()) {}

LocalMode::LocalMode(RankSet ranks, std::shared_ptr<world::WorldState> world)
    : ranks_(std::move(ranks)), world_(std::move(world)) {
  if (ranks_.empty()) throw Error("LocalMode needs at least one rank, got an empty rank set");
  // Every rank starts from the default generator's state: identical random tensors on all ranks.
  std::vector<std::pair<int, Generator>> generators;
  for (int r : ranks_) generators.emplace_back(r, default_generator());
  generators_ = RankMap<Generator>(std::move(generators));
  mode_stack.push_back(this);
  world::bind(world_.get());
}

LocalMode::~LocalMode() {
  world::unbind(world_.get());
  pop(this);
}

Generator& LocalMode::generator(int rank) { return generators_.at(rank); }

void LocalMode::manual_seed(const SymInt& seed) {
  if (seed.is_local() && seed.local().ranks() != ranks_)
    throw Error(fmt::format("manual_seed: per-rank seeds cover ranks {} but the local mode has ranks {}",
                            seed.local().ranks().to_string(), ranks_.to_string()));
  for (auto& [rank, generator] : generators_) generator.manual_seed(static_cast<uint64_t>(seed.at(rank)));
}

LocalMode* active_local_mode() { return mode_stack.empty() ? nullptr : mode_stack.back(); }

DisabledLocalMode maybe_disable_local_mode() { return {}; }

SymInt current_rank() {
  LocalMode* mode = active_local_mode();
  std::vector<int> hosted;
  if (mode != nullptr) {
    hosted = mode->ranks().ranks();
  } else {
    // Outside a mode: a rank's program (ts::spawn) is that rank; a simulated world is one process
    // holding rank 0's view; a process of a distributed world is its hosted ranks (one rank: that rank).
    if (const world::RunningProgram* program = world::running_program()) return program->rank;
    const world::WorldState& w = world::current();
    if (!w.distributed()) return 0;
    hosted = w.hosted_ranks();
    if (hosted.size() == 1) return hosted.front();
  }
  std::vector<std::pair<int, int64_t>> ranks;
  for (int r : hosted) ranks.emplace_back(r, r);
  return SymInt(LocalInt(RankMap<int64_t>(std::move(ranks))));
}

// Here rather than with the other world queries (world/world_api.cpp): it reads the mode, a layer up.
SymInt get_rank() { return current_rank(); }

Tensor rank_map(const std::function<Tensor(int rank)>& f) {
  LocalMode* mode = active_local_mode();
  if (mode == nullptr) return f(static_cast<int>(current_rank().as_int()));
  const RankSet ranks = mode->ranks();
  return detail::spmd_over("rank_map", ranks, f, current_rank());
}

Tensor tensor_map(const Tensor& t, const std::function<Tensor(int rank, const Tensor& shard)>& f) {
  if (!t.is_local()) return f(static_cast<int>(current_rank().as_int()), t);
  std::vector<std::pair<int, Tensor>> shards;
  for (const auto& [rank, shard] : t.shards()) {
    DisabledLocalMode plain_factories;
    Tensor mapped = f(rank, shard);
    if (mapped.defined()) shards.emplace_back(rank, std::move(mapped));
  }
  if (shards.empty())
    throw Error("tensor_map: the function dropped every rank; a local tensor cannot be empty");
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}

}  // namespace tessera
