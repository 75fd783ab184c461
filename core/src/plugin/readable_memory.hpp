// Reading memory a plugin points at without trusting the pointer: a wild pointer (a field the
// plugin meant as something else, a struct freed since) makes the read fail instead of killing the
// host with SIGSEGV. For structs the host walks on a plugin's word alone, such as extension chains.
#pragma once

#include <cstddef>

namespace tessera::plugin {

// Copies `bytes` bytes at `address` into `out` when all of them can be read in this process;
// returns false (leaving `out` unspecified) when any cannot.
bool read_if_readable(const void* address, void* out, std::size_t bytes);

// Whether all `bytes` bytes at `address` can be read (reads them, a page-sized piece at a time).
bool readable(const void* address, std::size_t bytes);

}  // namespace tessera::plugin
