// The ranks layer's side of tensor/local_factories.hpp: the factories' view of LocalMode. (The
// PlainFactories scope is with DisabledLocalMode, in local_mode.cpp: both push a disabled entry.)
#include "tensor/local_factories.hpp"

#include "tessera/local.hpp"

namespace tessera::detail {

LocalMode* factory_mode() { return active_local_mode(); }

const RankSet& factory_ranks(const LocalMode& mode) { return mode.ranks(); }

Generator& factory_generator(LocalMode& mode, int rank) { return mode.generator(rank); }

void factory_manual_seed(LocalMode& mode, const SymInt& seed) { mode.manual_seed(seed); }

SymInt factory_rank() { return current_rank(); }

}  // namespace tessera::detail
