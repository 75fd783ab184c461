// A test hook for crash safety: with TESSERA_DCP_TEST_CRASH_AT=k in the environment, a save kills
// its own process (SIGKILL, as an outside kill would) when it reaches its k-th step (steps: each
// piece of data written, each fsync, the metadata written, the rename, each stale file removed).
// Unset, reach() only counts. Tests fork a child that saves with k = 1, 2, ... and check that the
// directory still loads.
#pragma once

#include <cstdint>

namespace tessera::dcp {

class CrashPoints {
 public:
  CrashPoints();
  void reach();
  int64_t reached() const { return reached_; }

 private:
  int64_t crash_at_ = -1;
  int64_t reached_ = 0;
};

}  // namespace tessera::dcp
