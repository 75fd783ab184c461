// What the factories ask of the calling thread's LocalMode scopes: whether one is active, over
// which ranks, and each rank's generator. The modes and their per-thread stack live in the ranks
// layer, above this one, which defines these functions (ranks/local_factories.cpp); the factories
// call them without naming it. Nothing here is state: each call reads the thread's own scopes.
#pragma once

#include "tessera/generator.hpp"
#include "tessera/rank_map.hpp"
#include "tessera/sym_int.hpp"

namespace tessera {
class LocalMode;
}

namespace tessera::detail {

// The innermost enabled LocalMode on this thread; nullptr when none is (or it is disabled).
LocalMode* factory_mode();
// The ranks `mode` makes local tensors over, and rank `rank`'s random generator in it.
const RankSet& factory_ranks(const LocalMode& mode);
Generator& factory_generator(LocalMode& mode, int rank);
// Seeds `mode`'s generators: every rank alike, or (a local int) each rank its own.
void factory_manual_seed(LocalMode& mode, const SymInt& seed);
// This process's rank: inside a mode a local int {r: r}; outside, the world rank.
SymInt factory_rank();

// While alive, factories make plain tensors even inside a LocalMode (a DisabledLocalMode scope).
class [[nodiscard]] PlainFactories {
 public:
  PlainFactories();
  ~PlainFactories();
  PlainFactories(const PlainFactories&) = delete;
  PlainFactories& operator=(const PlainFactories&) = delete;
};

}  // namespace tessera::detail
