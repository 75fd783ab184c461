// Checks of a backend's memory functions rather than its kernels: allocation (0 bytes, large,
// alignment), host <-> device round trips of every dtype, and device <-> device copies.
#pragma once

#include "check_group.hpp"

namespace conformance {

void check_memory(Context& context);

}  // namespace conformance
