#include "caching_allocator.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

#include "tessera/sdk/cpp/backend_builder.hpp"

namespace tessera::cpu {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kLargeBlock = size_t{1} << 20;     // cache blocks of at least 1 MiB
constexpr size_t kCacheLimit = size_t{2} << 30;     // keep at most 2 GiB of free blocks

class BlockCache {
 public:
  void* take(size_t rounded) {
    std::lock_guard lock(mutex_);
    auto it = free_.find(rounded);
    if (it == free_.end()) return nullptr;
    void* block = it->second;
    free_.erase(it);
    cached_bytes_ -= rounded;
    sizes_[block] = rounded;
    return block;
  }
  void remember(void* block, size_t rounded) {
    std::lock_guard lock(mutex_);
    sizes_[block] = rounded;
  }
  // Returns true when the block was kept for reuse.
  bool give_back(void* block) {
    std::lock_guard lock(mutex_);
    auto it = sizes_.find(block);
    if (it == sizes_.end()) return false;
    const size_t rounded = it->second;
    sizes_.erase(it);
    // Over the limit, release the largest cached blocks first: they are the rarest to reuse.
    while (cached_bytes_ + rounded > kCacheLimit && !free_.empty()) {
      auto largest = std::prev(free_.end());
      cached_bytes_ -= largest->first;
      std::free(largest->second);
      free_.erase(largest);
    }
    if (rounded > kCacheLimit) {
      std::free(block);
      return true;
    }
    free_.emplace(rounded, block);
    cached_bytes_ += rounded;
    return true;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;          // size -> free block
  std::unordered_map<void*, size_t> sizes_;    // large block in use -> size
  size_t cached_bytes_ = 0;
};

BlockCache& cache() {
  static BlockCache* instance = new BlockCache();  // outlives every tensor, even static ones
  return *instance;
}

}  // namespace

tessera_status cached_alloc(void*, size_t bytes, void** out, tessera_error* error) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  const size_t size = rounded == 0 ? kAlignment : rounded;
  if (size >= kLargeBlock) {
    if ((*out = cache().take(size)) != nullptr) return TESSERA_OK;
    *out = std::aligned_alloc(kAlignment, size);
    if (*out == nullptr) return sdk::report(error, TESSERA_OUT_OF_MEMORY, "host allocation failed");
    cache().remember(*out, size);
    return TESSERA_OK;
  }
  *out = std::aligned_alloc(kAlignment, size);
  if (*out == nullptr) return sdk::report(error, TESSERA_OUT_OF_MEMORY, "host allocation failed");
  return TESSERA_OK;
}

void cached_free(void*, void* ptr) {
  if (ptr != nullptr && !cache().give_back(ptr)) std::free(ptr);
}

}  // namespace tessera::cpu
