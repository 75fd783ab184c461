#include "slab_blocks.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>

#include "tessera/sdk/cpp/memory_poisoning.hpp"

namespace tessera::cpu::slab_blocks {
namespace {

constexpr size_t kClasses = std::countr_zero(kLargestBlock / kHeaderBytes) + 1;

size_t class_of(size_t size) { return static_cast<size_t>(std::countr_zero(size / kHeaderBytes)); }
size_t class_size(size_t k) { return kHeaderBytes << k; }

// A free block holds the link to the next one in its first bytes; the rest stays poisoned.
struct Free {
  Free* next;
};

// A slab's own header, in its first kHeaderBytes; its blocks (header and bytes each) follow.
struct Slab {
  Slab* prev;  // in its class's list of slabs with a free block; unlinked while full
  Slab* next;
  Free* free;
  uint32_t used;
  uint32_t capacity;
  uint32_t klass;
};
static_assert(sizeof(Slab) <= kHeaderBytes);

// Slabs are aligned to their size: a block's slab is its address rounded down to it.
Slab* slab_of(void* user) {
  return reinterpret_cast<Slab*>(reinterpret_cast<uintptr_t>(user) & ~(uintptr_t{kSlabBytes} - 1));
}

void poison(Free* block, size_t k) {
  sdk::poison_memory(reinterpret_cast<char*>(block) + sizeof(Free), class_size(k) - sizeof(Free));
}
void unpoison(void* bytes, size_t count) { sdk::unpoison_memory(bytes, count); }

class SlabClass {
 public:
  void* take(size_t k) {
    std::lock_guard lock(mutex_);
    Slab* slab = partial_;
    if (slab == nullptr) {
      slab = spare_ != nullptr ? std::exchange(spare_, nullptr) : new_slab(k);
      if (slab == nullptr) return nullptr;
      link(slab);
    }
    Free* block = slab->free;
    slab->free = block->next;
    unpoison(block, class_size(k));
    if (++slab->used == slab->capacity) unlink(slab);
    return block;
  }

  void give_back(Slab* slab, void* user) {
    std::lock_guard lock(mutex_);
    give_back_locked(slab, user);
  }

  // Blocks chained through their first word, all of this class, under one lock.
  void give_back_chain(void* first) {
    std::lock_guard lock(mutex_);
    while (first != nullptr) {
      void* next = *static_cast<void**>(first);
      give_back_locked(slab_of(first), first);
      first = next;
    }
  }

  size_t held() {
    std::lock_guard lock(mutex_);
    return held_;
  }

 private:
  void give_back_locked(Slab* slab, void* user) {
    const bool was_full = slab->used == slab->capacity;
    Free* block = new (user) Free{slab->free};
    slab->free = block;
    poison(block, slab->klass);
    --slab->used;
    if (was_full) link(slab);
    if (slab->used > 0) return;
    // All free: kept as the class's one spare, or given back to the heap.
    unlink(slab);
    if (spare_ == nullptr) {
      spare_ = slab;
      return;
    }
    unpoison(slab, kSlabBytes);
    std::free(slab);
    --held_;
  }

  // A new slab of class k, every block free, in address order (the first taken first).
  Slab* new_slab(size_t k) {
    void* memory = std::aligned_alloc(kSlabBytes, kSlabBytes);
    if (memory == nullptr) return nullptr;
    auto* slab = new (memory) Slab{};
    const size_t stride = kHeaderBytes + class_size(k);
    slab->capacity = static_cast<uint32_t>((kSlabBytes - kHeaderBytes) / stride);
    slab->klass = static_cast<uint32_t>(k);
    char* const first = static_cast<char*>(memory) + kHeaderBytes;
    for (size_t i = slab->capacity; i-- > 0;) {
      char* header = first + i * stride;
      new (header) BlockHeader{class_size(k)};
      Free* block = new (header + kHeaderBytes) Free{slab->free};
      slab->free = block;
      poison(block, k);
    }
    ++held_;
    return slab;
  }
  void link(Slab* slab) {
    slab->prev = nullptr;
    slab->next = partial_;
    if (partial_ != nullptr) partial_->prev = slab;
    partial_ = slab;
  }
  void unlink(Slab* slab) {
    if (slab->prev != nullptr) slab->prev->next = slab->next;
    if (slab->next != nullptr) slab->next->prev = slab->prev;
    if (partial_ == slab) partial_ = slab->next;
    slab->prev = slab->next = nullptr;
  }

  std::mutex mutex_;
  Slab* partial_ = nullptr;  // slabs with a free block (and a used one: an all-free slab leaves)
  Slab* spare_ = nullptr;    // one slab with every block free
  size_t held_ = 0;
};

std::array<SlabClass, kClasses>& classes() {
  static auto* instance = new std::array<SlabClass, kClasses>();  // outlives every tensor, even static ones
  return *instance;
}

}  // namespace

void* take(size_t size) { return classes()[class_of(size)].take(class_of(size)); }

void give_back(void* user) noexcept {
  Slab* slab = slab_of(user);
  classes()[slab->klass].give_back(slab, user);
}

void give_back_chain(void* first) noexcept {
  if (first != nullptr) classes()[slab_of(first)->klass].give_back_chain(first);
}

size_t slabs_held(size_t size) { return classes()[class_of(size)].held(); }

}  // namespace tessera::cpu::slab_blocks
