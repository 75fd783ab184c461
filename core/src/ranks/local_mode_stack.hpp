// What the layers above ask of the calling thread's LocalMode scopes beyond tessera/local.hpp.
#pragma once

namespace tessera::detail {

// Whether the calling thread is inside a LocalMode, enabled or disabled (DisabledLocalMode scopes
// within it): plain tensors made there are the simulator's per-rank values on their way to a
// local tensor, or the user's scratch values, rather than the program's own.
bool inside_local_mode();

}  // namespace tessera::detail
