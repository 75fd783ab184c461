#include "caching_allocator.hpp"

#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <algorithm>

#include "tessera/sdk/cpp/backend_builder.hpp"

namespace tessera::cpu {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kLargeBlock = size_t{1} << 20;  // cache blocks of at least 1 MiB
constexpr size_t kCacheLimit = size_t{2} << 30;  // keep at most 2 GiB of free blocks

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
  const size_t size = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  *out = size >= kLargeBlock ? cache().take(size) : nullptr;
  if (*out == nullptr) *out = new_block(size);
  if (*out == nullptr) return sdk::report(error, TESSERA_OUT_OF_MEMORY, "host allocation failed");
  return TESSERA_OK;
}

void cached_free(void*, void* ptr) {
  if (ptr == nullptr) return;
  if (size_of(ptr) >= kLargeBlock) return cache().give_back(ptr);
  std::free(block_of(ptr));
}

}  // namespace tessera::cpu
