// Grad mode as a value a coroutine can carry (see grad_mode.cpp).
#pragma once

namespace tessera::autograd {

// Swaps the calling thread's grad mode (enabled or not) with `other`: a coroutine running a rank's
// program (ts::spawn) keeps its own NoGradGuard scopes while another rank runs on the thread.
void exchange_grad_mode(bool& other);

}  // namespace tessera::autograd
