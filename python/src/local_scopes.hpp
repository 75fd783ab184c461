// The scopes opened from Python (ts.LocalMode, mode.disable(), ts.maybe_disable_local_mode()) and
// the per-thread stack that keeps them in order; see local_scopes.cpp. The rest of local mode
// (rank_callback.hpp) needs to see that stack only to close what a callback left open.
#pragma once

#include <cstddef>
#include <string>

#include "bindings.hpp"

namespace tessera::python {

// How many scopes this thread has opened from Python and not yet exited.
size_t open_scope_depth();
// Closes every scope above `depth` on this thread, innermost first; returns their names.
std::string close_above(size_t depth);

// ts.LocalMode, ts.DisabledLocalMode, ts.maybe_disable_local_mode, ts.active_local_mode,
// ts.in_per_rank_region (called from bind_local).
void bind_local_scopes(nb::module_& m);

}  // namespace tessera::python
