// Host memory for the CPU backend, with large blocks kept for reuse.
//
// A freshly mapped block costs a page fault per 4 KiB on first touch: for a 64 MiB tensor that is
// most of the time of a copy into it. Simulated collectives and element-wise ops allocate
// same-sized outputs over and over, so blocks of 1 MiB and more are cached by size on free and
// handed out again (already faulted in), up to a bounded total. Blocks up to 64 KiB are rounded to
// a power of two and recycled by the freeing thread (a few per size), since aligned_alloc skips
// glibc's own per-thread cache; those up to 4 KiB come from slabs (slab_blocks.hpp) rather than
// the heap, and the rest, up to 1 MiB, from aligned_alloc.
#pragma once

#include "tessera/sdk/backend.h"

namespace tessera::cpu {

tessera_status cached_alloc(void* context, size_t bytes, void** out, tessera_error* error);
void cached_free(void* context, void* ptr);

}  // namespace tessera::cpu
