// The CPU backend's argument checks: the SDK's (sdk/cpp/kernel_checks.hpp), with this backend's
// dimension limit bound in.
#pragma once

#include <string>

#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::cpu {

using namespace sdk::checks;

// for_each_offset keeps a fixed 64-entry odometer.
inline constexpr int kMaxNdim = 64;
inline constexpr sdk::ArityCheck expect_arity{{kMaxNdim, ""}};

[[noreturn]] inline void fail(const std::string& message) { sdk::fail_invalid(message); }

}  // namespace tessera::cpu
