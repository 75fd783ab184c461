// The generator that random factories draw from on a thread outside every LocalMode, when it is
// not the process's default generator: a rank's program (ts::spawn) has a generator of its own,
// as a process of a distributed run would.
#pragma once

#include "tessera/generator.hpp"

namespace tessera::detail {

// Swaps the calling thread's program generator with `other` (null: the default generator). The
// generator must outlive its time on the thread.
void exchange_program_generator(Generator*& other);

}  // namespace tessera::detail
