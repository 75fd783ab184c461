// Grad mode as a value a coroutine can carry (see grad_mode.cpp).
#pragma once

namespace tessera::autograd {

// The calling thread's grad mode (enabled or not), for a coroutine running a rank's program
// (ts::spawn), which keeps its own NoGradGuard scopes while another rank runs on the thread: the
// scheduler swaps it through this reference, taken once per thread.
bool& thread_grad_mode();

}  // namespace tessera::autograd
