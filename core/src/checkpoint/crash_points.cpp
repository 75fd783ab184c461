#include "checkpoint/crash_points.hpp"

#include <csignal>
#include <cstdlib>
#include <string>

namespace tessera::dcp {

CrashPoints::CrashPoints() {
  if (const char* at = std::getenv("TESSERA_DCP_TEST_CRASH_AT")) {
    try {
      crash_at_ = std::stoll(at);
    } catch (const std::exception&) {
      crash_at_ = -1;
    }
  }
}

void CrashPoints::reach() {
  if (++reached_ == crash_at_) std::raise(SIGKILL);
}

}  // namespace tessera::dcp
