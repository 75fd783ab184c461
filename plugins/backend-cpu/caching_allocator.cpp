#include "caching_allocator.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <utility>
#include <algorithm>

#include "slab_blocks.hpp"
#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/thread_local_address.hpp"

namespace tessera::cpu {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kSmallBlock = size_t{64} << 10;  // blocks up to 64 KiB are kept per thread
// Every larger block is cached, by exact size. Blocks between 64 KiB and 1 MiB once went straight
// back to malloc, which churned its bins (unlink, consolidate) on every collective over a few
// thousand ranks: their staging areas are a few hundred KiB.
constexpr size_t kLargeBlock = kSmallBlock + 1;
constexpr size_t kCacheLimit = size_t{2} << 30;  // keep at most 2 GiB of free blocks
constexpr size_t kSmallClasses = 11;             // powers of two from 64 B to 64 KiB
// How many free blocks a thread keeps per class: 512 KiB of each class, and at least 16 blocks (so
// at most 6 MiB per thread). A collective over 4096 ranks frees 4096 one-row results at once and
// allocates as many on its next call; a cap of a few blocks sent all but those few to malloc,
// whose memalign then consolidated its bins on every call.
constexpr size_t kBytesPerClass = size_t{512} << 10;
constexpr int blocks_per_class(size_t k) {
  return static_cast<int>(std::max<size_t>(16, kBytesPerClass / (kAlignment << k)));
}

// Every block starts with a header (one alignment unit, slab_blocks::BlockHeader) holding its
// usable size, so free knows whether a block is cacheable without a lookup: small frees never touch
// the cache's lock. Slab blocks have the same header.
using Header = slab_blocks::BlockHeader;
static_assert(kAlignment == slab_blocks::kHeaderBytes);

void* user_pointer(void* block) { return static_cast<char*>(block) + kAlignment; }
void* block_of(void* user) { return static_cast<char*>(user) - kAlignment; }
size_t size_of(void* user) { return static_cast<Header*>(block_of(user))->size; }

void* new_block(size_t size) {
  void* block = std::aligned_alloc(kAlignment, size + kAlignment);
  if (block == nullptr) return nullptr;
  new (block) Header{size};
  return user_pointer(block);
}

class BlockCache {
 public:
  void* take(size_t size) {
    std::lock_guard lock(mutex_);
    auto it = free_.find(size);
    if (it == free_.end()) return nullptr;
    void* user = it->second;
    free_.erase(it);
    cached_bytes_ -= size;
    return user;
  }
  void give_back(void* user) {
    const size_t size = size_of(user);
    std::lock_guard lock(mutex_);
    // Over the limit, release the largest cached blocks first: they are the rarest to reuse.
    while (cached_bytes_ + size > kCacheLimit && !free_.empty()) {
      auto largest = std::prev(free_.end());
      cached_bytes_ -= largest->first;
      std::free(block_of(largest->second));
      free_.erase(largest);
    }
    if (size > kCacheLimit) return std::free(block_of(user));
    free_.emplace(size, user);
    cached_bytes_ += size;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // size -> free block (user pointer)
  size_t cached_bytes_ = 0;
};

// A block of `size` bytes that no cache holds: from a slab (slab_blocks.hpp) for the slabs' sizes,
// else from the heap. A slab block must not go to free(), nor a heap block to a slab.
void* fresh_block(size_t size) {
  return slab_blocks::holds(size) ? slab_blocks::take(size) : new_block(size);
}
void release_block(void* user) {
  if (slab_blocks::holds(size_of(user)))
    slab_blocks::give_back(user);
  else
    std::free(block_of(user));
}

// Small blocks, recycled by the thread that frees them, sized to a power of two. Dispatching a
// small op allocates its output and frees it an op later; aligned_alloc bypasses glibc's
// per-thread cache and churns its bins (malloc_consolidate) so that it costs more than the op.
// Each thread keeps free blocks per size class instead (blocks_per_class): no lock, and nothing any other
// thread or world can observe (a block holds no data anyone reads before writing it).
//
// The lists are plain thread-local data, trivially destructible and constant-initialised: a take or
// a keep costs one thread-local access (a call, in a plugin) and no initialisation guard. A
// separate thread-local Drain, armed when the thread first keeps a block, empties them at exit.
bool is_power_of_two(size_t size) { return size != 0 && (size & (size - 1)) == 0; }  // no popcount call
size_t class_of(size_t size) { return static_cast<size_t>(std::countr_zero(size / kAlignment)); }
size_t class_size(size_t size) { return std::bit_ceil(size); }

struct Free {
  Free* next;
};
struct SmallBlocks {
  std::array<Free*, kSmallClasses> free;
  std::array<int, kSmallClasses> count;
  bool drain_armed;
  bool retired;  // drained: blocks freed during the rest of this thread's exit go to the slabs or the heap
};
thread_local SmallBlocks small_blocks{};
SmallBlocks& my_small_blocks() { return sdk::thread_local_address(small_blocks); }  // one TLS call per use

struct Drain {
  bool armed = false;
  ~Drain() {
    SmallBlocks& mine = my_small_blocks();
    for (Free*& head : mine.free)
      while (head != nullptr) release_block(std::exchange(head, head->next));
    mine.count = {};
    mine.retired = true;
  }
};
thread_local Drain drain;

void* take_small(SmallBlocks& mine, size_t size) {
  Free*& head = mine.free[class_of(size)];
  if (head == nullptr) return nullptr;
  --mine.count[class_of(size)];
  return std::exchange(head, head->next);
}

// A full list of a slab class hands its newest half to the slabs in one batch (one lock, not one
// per block), so the thread's next frees are kept again.
void spill_half(SmallBlocks& mine, size_t k) {
  const int spilled = mine.count[k] / 2;
  Free* first = mine.free[k];
  Free* last = first;
  for (int i = 1; i < spilled; ++i) last = last->next;
  mine.free[k] = last->next;
  mine.count[k] -= spilled;
  last->next = nullptr;
  slab_blocks::give_back_chain(first);
}

bool keep_small(SmallBlocks& mine, void* user, size_t size) {
  const size_t k = class_of(size);
  // A block's header says its size; one outside the classes (a corrupted header) is not kept.
  if (k >= kSmallClasses) return false;
  if (mine.count[k] == blocks_per_class(k)) {
    if (!slab_blocks::holds(size)) return false;
    spill_half(mine, k);
  }
  if (!mine.drain_armed) {
    drain.armed = true;  // constructs the drain: its destructor runs at this thread's exit
    mine.drain_armed = true;
  }
  ++mine.count[k];
  mine.free[k] = new (user) Free{mine.free[k]};
  return true;
}

BlockCache& cache() {
  static BlockCache* instance = new BlockCache();  // outlives every tensor, even static ones
  return *instance;
}

}  // namespace

tessera_status cached_alloc(void*, size_t bytes, void** out, tessera_error* error) {
  // No object is larger than PTRDIFF_MAX bytes; refusing such sizes here also keeps the rounding
  // below (and the header) from wrapping one to a small block.
  if (bytes > static_cast<size_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    *out = nullptr;
    return sdk::report(error, TESSERA_OUT_OF_MEMORY,
                       "host allocation failed: the size does not fit an object (at most PTRDIFF_MAX bytes)");
  }
  size_t size = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  SmallBlocks& mine = my_small_blocks();
  const bool small = size <= kSmallBlock && !mine.retired;
  // Slab sizes are rounded to their class on every thread, one that exits too: slabs serve them all.
  if (small || size <= slab_blocks::kLargestBlock) size = class_size(size);  // bit_ceil only of small sizes
  *out = small ? take_small(mine, size) : size >= kLargeBlock ? cache().take(size) : nullptr;
  if (*out == nullptr) *out = fresh_block(size);
  if (*out == nullptr) return sdk::report(error, TESSERA_OUT_OF_MEMORY, "host allocation failed");
  return TESSERA_OK;
}

void cached_free(void*, void* ptr) {
  if (ptr == nullptr) return;
  const size_t size = size_of(ptr);
  if (size >= kLargeBlock) return cache().give_back(ptr);
  // A small block's size is its class's (a power of two), unless it was made while its thread exited.
  if (size <= kSmallBlock && is_power_of_two(size)) {
    SmallBlocks& mine = my_small_blocks();
    if (!mine.retired && keep_small(mine, ptr, size)) return;
  }
  release_block(ptr);
}

}  // namespace tessera::cpu
