#include "caching_allocator.hpp"

#include <array>
#include <bit>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <utility>
#include <algorithm>

#include "tessera/sdk/cpp/backend_builder.hpp"

namespace tessera::cpu {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kSmallBlock = size_t{64} << 10;  // blocks up to 64 KiB are kept per thread
// Every larger block is cached, by exact size. Blocks between 64 KiB and 1 MiB once went straight
// back to malloc, which churned its bins (unlink, consolidate) on every collective over a few
// thousand ranks: their staging areas are a few hundred KiB.
constexpr size_t kLargeBlock = kSmallBlock + 1;
constexpr size_t kCacheLimit = size_t{2} << 30;  // keep at most 2 GiB of free blocks
constexpr size_t kSmallClasses = 11;              // powers of two from 64 B to 64 KiB
// How many free blocks a thread keeps per class: 512 KiB of each class, and at least 16 blocks (so
// at most 6 MiB per thread). A collective over 4096 ranks frees 4096 one-row results at once and
// allocates as many on its next call; a cap of a few blocks sent all but those few to malloc,
// whose memalign then consolidated its bins on every call.
constexpr size_t kBytesPerClass = size_t{512} << 10;
constexpr int blocks_per_class(size_t k) {
  return static_cast<int>(std::max<size_t>(16, kBytesPerClass / (kAlignment << k)));
}

// Every block starts with a header (one alignment unit) holding its usable size, so free knows
// whether a block is cacheable without a lookup: small frees never touch the cache's lock.
struct Header {
  size_t size;
};
static_assert(sizeof(Header) <= kAlignment);

void* user_pointer(void* block) { return static_cast<char*>(block) + kAlignment; }
void* block_of(void* user) { return static_cast<char*>(user) - kAlignment; }
size_t size_of(void* user) { return static_cast<Header*>(block_of(user))->size; }

void* new_block(size_t size) {
  void* block = std::aligned_alloc(kAlignment, size + kAlignment);
  if (block == nullptr) return nullptr;
  static_cast<Header*>(block)->size = size;
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

// Small blocks, recycled by the thread that frees them, sized to a power of two. Dispatching a
// small op allocates its output and frees it an op later; aligned_alloc bypasses glibc's
// per-thread cache and churns its bins (malloc_consolidate) so that it costs more than the op.
// Each thread keeps free blocks per size class instead (blocks_per_class): no lock, and nothing any other
// thread or world can observe (a block holds no data anyone reads before writing it).
class SmallBlocks {
 public:
  ~SmallBlocks() {
    for (Free*& head : free_)
      while (head != nullptr) std::free(block_of(std::exchange(head, head->next)));
    retired_ = true;  // frees during the rest of this thread's exit go to std::free
  }
  static size_t class_of(size_t size) { return static_cast<size_t>(std::countr_zero(size / kAlignment)); }
  static size_t class_size(size_t size) { return std::bit_ceil(size); }

  void* take(size_t size) {
    Free*& head = free_[class_of(size)];
    if (head == nullptr) return nullptr;
    --count_[class_of(size)];
    return std::exchange(head, head->next);
  }
  bool keep(void* user) {
    const size_t k = class_of(size_of(user));
    // A block's header says its size; one outside the classes (a corrupted header) is not kept.
    if (k >= kSmallClasses || count_[k] == blocks_per_class(k)) return false;
    ++count_[k];
    free_[k] = new (user) Free{free_[k]};
    return true;
  }
  static bool retired() { return retired_; }

 private:
  struct Free {
    Free* next;
  };
  std::array<Free*, kSmallClasses> free_{};
  std::array<int, kSmallClasses> count_{};
  static thread_local bool retired_;  // trivially destructible: readable after ~SmallBlocks
};
thread_local bool SmallBlocks::retired_ = false;

SmallBlocks& small_blocks() {
  thread_local SmallBlocks blocks;
  return blocks;
}

BlockCache& cache() {
  static BlockCache* instance = new BlockCache();  // outlives every tensor, even static ones
  return *instance;
}

}  // namespace

tessera_status cached_alloc(void*, size_t bytes, void** out, tessera_error* error) {
  // Rounding up (and the header) would wrap such a size to a small block; no host has that much.
  if (bytes > std::numeric_limits<size_t>::max() - 2 * kAlignment) {
    *out = nullptr;
    return sdk::report(error, TESSERA_OUT_OF_MEMORY, "host allocation failed: the size does not fit size_t");
  }
  size_t size = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  const bool small = size <= kSmallBlock && !SmallBlocks::retired();
  if (small) size = SmallBlocks::class_size(size);
  *out = small ? small_blocks().take(size) : size >= kLargeBlock ? cache().take(size) : nullptr;
  if (*out == nullptr) *out = new_block(size);
  if (*out == nullptr) return sdk::report(error, TESSERA_OUT_OF_MEMORY, "host allocation failed");
  return TESSERA_OK;
}

void cached_free(void*, void* ptr) {
  if (ptr == nullptr) return;
  const size_t size = size_of(ptr);
  if (size >= kLargeBlock) return cache().give_back(ptr);
  // A small block's size is its class's (a power of two), unless it was made while its thread exited.
  if (size <= kSmallBlock && std::has_single_bit(size) && !SmallBlocks::retired() && small_blocks().keep(ptr)) return;
  std::free(block_of(ptr));
}

}  // namespace tessera::cpu
