// Symbolic verification of a schedule: runs it on values that record *which input elements*
// they combine, then checks that every rank ends with exactly what its collective promises.
//
// Values are tracked per interval, not per element: every step moves a contiguous chunk, so an
// interval of a buffer holds "input element k + t of rank r" for its t-th element, and a schedule
// over a billion elements costs what one over ten does. The contributions an interval combines are
// kept as runs of consecutive ranks (checker_terms.hpp), so verifying costs the steps times the
// runs a value has (one or two for the bundled algorithms, at most the group size), not times
// the group size.
#pragma once

#include <string>

#include "comm/schedule.hpp"

namespace tessera::comm {

// Empty when the schedule is correct; otherwise what is wrong: a malformed step (a peer, a buffer
// or a chunk out of bounds), a deadlock, an unmatched send, a count mismatch, the first output
// element that does not hold exactly the contributions its collective promises (what it holds,
// what it should, and which contributions are missing or extra), or — for a barrier — a rank
// that can finish before hearing from every other rank. Never throws for any schedule.
std::string verify(const Schedule& schedule);

}  // namespace tessera::comm
