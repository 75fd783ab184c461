// Symbolic verification of a schedule: runs it on values that record *which input elements*
// they combine, then checks that every rank ends with exactly what its collective promises.
#pragma once

#include <string>

#include "comm/schedule.hpp"

namespace tessera::comm {

// Empty when the schedule is correct; otherwise what is wrong (the first mismatch, a deadlock, an
// unmatched send, a count mismatch, or — for a barrier — a rank that finished before hearing from
// every other rank).
std::string verify(const Schedule& schedule);

}  // namespace tessera::comm
