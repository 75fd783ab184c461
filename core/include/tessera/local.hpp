// Local tensors and local mode: one process holding every rank's shard (PyTorch: LocalTensor,
// LocalTensorMode, rank_map, tensor_map, maybe_run_for_local_tensor).
#pragma once

#include <functional>
#include <memory>

#include "tessera/detail/spmd.hpp"
#include "tessera/generator.hpp"
#include "tessera/rank_map.hpp"
#include "tessera/sym_int.hpp"
#include "tessera/tensor.hpp"
#include "tessera/world.hpp"

namespace tessera {

// A local tensor from per-rank dense tensors. Checked in this order: the map is not empty; every
// shard is a defined dense tensor; shards share one dtype; shards share one backend; no shard
// requires grad.
Tensor local_tensor(RankMap<Tensor> shards);
inline Tensor local_tensor(std::initializer_list<std::pair<int, Tensor>> shards) {
  return local_tensor(RankMap<Tensor>(std::vector<std::pair<int, Tensor>>(shards)));
}

class LocalMode;

// While alive, factories make plain tensors even inside a LocalMode; ops on existing local
// tensors still run per rank.
class [[nodiscard]] DisabledLocalMode {
 public:
  DisabledLocalMode();
  ~DisabledLocalMode();
  DisabledLocalMode(const DisabledLocalMode&) = delete;
  DisabledLocalMode& operator=(const DisabledLocalMode&) = delete;
};

// A scoped mode over a set of ranks: while it is the innermost enabled mode on this thread,
// factories (zeros, ones, full, empty, arange, eye, rand, randn, tensor, ...) return local tensors
// over its ranks. Modes nest; destroying one restores the outer. Each rank has its own random
// generator; all start from the default generator's state, so random tensors are identical on
// every rank until reseeded per rank with manual_seed(LocalInt).
//
// A mode is bound to a world (tessera/world.hpp) for its lifetime: what the thread issues inside it
// (messages, collectives, what counters and traces see) goes to that world. Given a number or a
// rank set, a mode makes a new simulated world of its own (observed by the counters and trace
// scopes of the world it was opened in); given a World, it joins it.
class LocalMode {
 public:
  explicit LocalMode(int num_ranks);         // ranks 0..num_ranks-1 of a new world of num_ranks
  explicit LocalMode(const RankSet& ranks);  // a new world of (largest rank + 1) ranks
  explicit LocalMode(const World& world);    // the ranks this process hosts in `world`
  ~LocalMode();
  LocalMode(const LocalMode&) = delete;
  LocalMode& operator=(const LocalMode&) = delete;

  const RankSet& ranks() const { return ranks_; }
  World world() const { return World(world_); }
  DisabledLocalMode disable() const { return {}; }

  Generator& generator(int rank);
  // One seed for every rank, or (a LocalInt) each rank its own.
  void manual_seed(const SymInt& seed);

 private:
  LocalMode(RankSet ranks, std::shared_ptr<world::WorldState> world);

  RankSet ranks_;
  RankMap<Generator> generators_;
  std::shared_ptr<world::WorldState> world_;
};

// The innermost enabled mode on this thread; nullptr when none is (or it is disabled).
LocalMode* active_local_mode();
// Disables local mode for a scope whether or not one is active.
DisabledLocalMode maybe_disable_local_mode();

// This process's rank: inside a mode a local int {r: r}; outside, the world rank (0 in simulation).
SymInt current_rank();

// Inside a mode: a local tensor whose shard r is f(r), computed with the mode disabled.
// Outside: f(current rank) as a plain tensor.
Tensor rank_map(const std::function<Tensor(int rank)>& f);

// For a local tensor: shard r becomes f(r, shard r); a rank for which f returns an undefined
// Tensor is dropped. For a plain tensor: f(current rank, t).
Tensor tensor_map(const Tensor& t, const std::function<Tensor(int rank, const Tensor& shard)>& f);

// Inside a mode: calls f once per rank of the mode with local arguments unwrapped to that rank's
// value (Tensor -> shard, SymInt -> int64_t, Scalar -> its value) and combines the results as
// ops do. Outside a mode: calls f once. f must not issue collectives.
template <class F, class... Args>
auto run_per_rank(F&& f, const Args&... args) {
  if (LocalMode* mode = active_local_mode()) {
    const RankSet ranks = mode->ranks();
    return detail::spmd_over("run_per_rank", ranks, f, args...);
  }
  return detail::spmd("run_per_rank", f, args...);
}

// manual_seed(const SymInt&), which reseeds every rank's generator inside a mode, is declared
// with the generators (tessera/generator.hpp).

// True while this thread runs a per-rank function of run_per_rank (collectives check it).
bool in_per_rank_region();

}  // namespace tessera
