// What the layers above ask of the calling thread's LocalMode scopes beyond tessera/local.hpp.
#pragma once

#include <vector>

namespace tessera {
class LocalMode;
}

namespace tessera::detail {

// Whether the calling thread is inside a LocalMode, enabled or disabled (DisabledLocalMode scopes
// within it): plain tensors made there are the simulator's per-rank values on their way to a
// local tensor, or the user's scratch values, rather than the program's own.
bool inside_local_mode();

// Swaps the calling thread's stack of mode scopes with `other` (innermost last; null entries are
// DisabledLocalMode scopes): a coroutine running a rank's program (ts::spawn) keeps its own scopes
// while another rank runs on the same thread.
void exchange_mode_stack(std::vector<LocalMode*>& other);

}  // namespace tessera::detail
