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

// The calling thread's stack of mode scopes (innermost last; null entries are DisabledLocalMode
// scopes), for a coroutine running a rank's program (ts::spawn), which keeps its own scopes while
// another rank runs on the same thread: the scheduler swaps them through this reference, taken
// once per thread (a thread-local variable's address is fixed for the thread's life).
std::vector<LocalMode*>& thread_mode_stack();

}  // namespace tessera::detail
