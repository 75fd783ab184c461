// Grad mode: per thread, so that a NoGradGuard on one thread (an optimizer step, a second world)
// never turns recording off on another.
#include "autograd/grad_mode.hpp"

#include "tessera/autograd.hpp"

namespace tessera {
namespace {
thread_local bool grad_enabled = true;
}  // namespace

bool is_grad_enabled() { return grad_enabled; }

NoGradGuard::NoGradGuard() : previous_(grad_enabled) { grad_enabled = false; }
NoGradGuard::~NoGradGuard() { grad_enabled = previous_; }

AutoGradMode::AutoGradMode(bool enabled) : previous_(grad_enabled) { grad_enabled = enabled; }
AutoGradMode::~AutoGradMode() { grad_enabled = previous_; }

bool& autograd::thread_grad_mode() { return grad_enabled; }

}  // namespace tessera
