// Whether a schedule may run with every rank's output buffer in its input's memory.
//
// An in-place collective (dist::all_reduce) writes its result back into the tensor it read. When
// the schedule reads each input element only to copy it to the same place of the output, and
// before anything else writes that part of the output, then running it with output == input gives
// bitwise the results of running it with two buffers: the copies become no-ops and every other
// step sees the same values. The executor then neither allocates an output nor moves the result
// into the tensor afterwards.
#pragma once

#include "comm/schedule.hpp"

namespace tessera::comm {

// True when, on every rank, the output is as long as the input, every step that reads the input is a Copy of
// an input range to the same range of the output (an identity copy, whatever the sizes of the two buffers),
// and all of them come before the first other step that writes the output. Sends from the input, reductions
// from it and copies that move elements disqualify a schedule. O(steps).
bool runs_in_place(const Schedule& schedule);

// Whether `step` copies an input range onto the same range of the output: a no-op when the
// output is the input's memory.
bool identity_copy(const Step& step);

}  // namespace tessera::comm
