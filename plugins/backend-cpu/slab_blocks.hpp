// Small host blocks carved from 64 KiB slabs, behind the per-thread free lists of
// caching_allocator.cpp.
//
// A collective over thousands of ranks frees thousands of small buffers at once (each rank's old
// shard, when the ranks take the one shared result) and allocates few: every per-thread list is
// full after a few calls, and the rest went to free(). Blocks from aligned_alloc are too large for
// glibc's fast bins, so each free() went to the unsorted bin and the next malloc sorted them all
// again: about 270 instructions per rank of a 16-float all_reduce over 1024 ranks, a fifth of its
// cost. A slab takes a block back with a push on its free list under its class's lock; a slab
// whose blocks are all free goes back to the heap (one empty slab per class is kept), so memory
// follows what is live.
//
// Blocks keep caching_allocator's layout: a 64-byte header holding the block's size, then the
// block. Every block of a class lies in slabs of that class; the slab of a block is found by
// masking its address (slabs are aligned to their size). Thread-safe: any thread may free a block
// any thread took.
#pragma once

#include <cstddef>

namespace tessera::cpu::slab_blocks {

constexpr size_t kHeaderBytes = 64;     // caching_allocator's alignment unit and header
constexpr size_t kLargestBlock = 4096;  // classes 64 B, 128 B, ... 4 KiB (powers of two)
constexpr size_t kSlabBytes = size_t{64} << 10;

// The start of every block's header, whoever made the block (caching_allocator.cpp or a slab): its
// usable size, so a free knows where the block belongs without a lookup.
struct BlockHeader {
  size_t size;
};
static_assert(sizeof(BlockHeader) <= kHeaderBytes);

// Whether `size` is a slab class: a power of two from 64 B to 4 KiB.
constexpr bool holds(size_t size) {
  return size >= kHeaderBytes && size <= kLargestBlock && (size & (size - 1)) == 0;
}

// A block of `size` bytes (holds(size)), its header written; nullptr when the heap is exhausted.
void* take(size_t size);
// Gives back a block take() returned (the user pointer, after the header).
void give_back(void* user) noexcept;
// Gives back blocks of one class chained through their first word (each holds the next block's
// user pointer, the last nullptr), under one lock: a thread whose list is full hands over a
// batch instead of taking the lock per block.
void give_back_chain(void* first) noexcept;

// How many slabs the class of `size` holds now, in use or the kept empty one (for tests).
size_t slabs_held(size_t size);

}  // namespace tessera::cpu::slab_blocks
