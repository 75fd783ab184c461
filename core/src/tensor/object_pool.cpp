#include "tensor/object_pool.hpp"

#include <array>
#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_POOL_POISONS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_POOL_POISONS 1
#endif
#endif
#if defined(TESSERA_POOL_POISONS)
#include <sanitizer/asan_interface.h>
#endif

namespace tessera::object_pool {
namespace {

constexpr size_t kClasses = kLargest / kGranule;

size_t class_of(size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kGranule; }
size_t class_bytes(size_t k) { return (k + 1) * kGranule; }
size_t most_blocks(size_t k) { return kBytesPerClass / class_bytes(k); }

// A free block holds the link to the next one in its first bytes; the rest stays poisoned.
struct Free {
  Free* next;
};

void poison(void* block, size_t k) {
#if defined(TESSERA_POOL_POISONS)
  ASAN_POISON_MEMORY_REGION(static_cast<char*>(block) + sizeof(Free), class_bytes(k) - sizeof(Free));
#else
  static_cast<void>(block), static_cast<void>(k);
#endif
}
void unpoison(void* block, size_t k) {
#if defined(TESSERA_POOL_POISONS)
  ASAN_UNPOISON_MEMORY_REGION(block, class_bytes(k));
#else
  static_cast<void>(block), static_cast<void>(k);
#endif
}

class ThreadBlocks {
 public:
  ~ThreadBlocks() {
    for (size_t k = 0; k < kClasses; ++k)
      while (Free* block = heads_[k]) {
        heads_[k] = block->next;
        unpoison(block, k);
        ::operator delete(block);
      }
    retired_ = true;  // blocks freed later in this thread's exit go straight to the heap
  }
  void* take(size_t k) {
    Free* block = heads_[k];
    if (block == nullptr) return ::operator new(class_bytes(k));
    heads_[k] = block->next;
    --counts_[k];
    unpoison(block, k);
    return block;
  }
  void give_back(void* block, size_t k) {
    if (counts_[k] == most_blocks(k)) return ::operator delete(block);
    heads_[k] = new (block) Free{heads_[k]};
    ++counts_[k];
    poison(block, k);
  }
  size_t count(size_t k) const { return counts_[k]; }
  static bool retired() { return retired_; }

 private:
  std::array<Free*, kClasses> heads_{};
  std::array<size_t, kClasses> counts_{};
  static thread_local bool retired_;  // trivially destructible: readable after ~ThreadBlocks
};
thread_local bool ThreadBlocks::retired_ = false;

ThreadBlocks& blocks() {
  thread_local ThreadBlocks mine;
  return mine;
}

}  // namespace

void* take(size_t bytes) {
  if (bytes > kLargest) return ::operator new(bytes);  // not a pooled size: the heap's
  const size_t k = class_of(bytes);
  if (ThreadBlocks::retired()) return ::operator new(class_bytes(k));
  return blocks().take(k);
}

void give_back(void* block, size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes > kLargest || ThreadBlocks::retired()) return ::operator delete(block);
  blocks().give_back(block, class_of(bytes));
}

size_t pooled(size_t bytes) { return bytes > kLargest || ThreadBlocks::retired() ? 0 : blocks().count(class_of(bytes)); }

}  // namespace tessera::object_pool
