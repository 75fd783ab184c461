// How a simulated collective gets its result: by evaluating its schedule's plan (plan_evaluator.hpp,
// the default) or by replaying the schedule's messages (executor.hpp). Replay stays for worlds spread
// over processes, and can be forced for debugging, or to compare the two: TESSERA_COLLECTIVE_REPLAY=1
// (read at first use; 0 or unset: evaluate), or force_replay() at run time.
#pragma once

#include <cstdint>

namespace tessera::comm {

bool replay_forced();
void force_replay(bool on);

// How many simulated collectives (fibres) each path ran since the process started: tests check
// which path is taken.
struct PathCounts {
  uint64_t evaluated = 0;
  uint64_t replayed = 0;
};
PathCounts path_counts();
void count_path(bool evaluated);

}  // namespace tessera::comm
