// The exit statuses of tessera-conformance. 77 is the status CTest (SKIP_RETURN_CODE) and the GNU
// test drivers read as "skipped", so a backend missing on this machine shows up as a skip, never a pass.
#pragma once

namespace conformance {

inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnavailable = 77;

}  // namespace conformance
