// The generator that random factories draw from on a thread outside every LocalMode, when it is
// not the process's default generator: a rank's program (ts::spawn) has a generator of its own,
// as a process of a distributed run would.
#pragma once

#include "tessera/generator.hpp"

namespace tessera::detail {

// The calling thread's program generator (null: the default generator), which the scheduler of a
// spawn swaps with each rank's through this reference, taken once per thread. A generator set
// here must outlive its time on the thread.
Generator*& thread_program_generator();

}  // namespace tessera::detail
