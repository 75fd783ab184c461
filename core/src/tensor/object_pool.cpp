#include "tensor/object_pool.hpp"

#include <array>
#include <utility>

#include "tessera/sdk/cpp/memory_poisoning.hpp"
#include "tessera/sdk/cpp/thread_local_address.hpp"

namespace tessera::object_pool {
namespace {

constexpr size_t kClasses = kLargest / kGranule;

size_t class_of(size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kGranule; }
constexpr size_t class_bytes(size_t k) { return (k + 1) * kGranule; }
// Per class, as a table: a division on every give_back would cost more than the rest of it.
constexpr std::array<size_t, kClasses> kMostBlocks = [] {
  std::array<size_t, kClasses> most{};
  for (size_t k = 0; k < kClasses; ++k) most[k] = kBytesPerClass / class_bytes(k);
  return most;
}();
size_t most_blocks(size_t k) { return kMostBlocks[k]; }

// A free block holds the link to the next one in its first bytes; the rest stays poisoned.
struct Free {
  Free* next;
};

void poison(void* block, size_t k) {
  sdk::poison_memory(static_cast<char*>(block) + sizeof(Free), class_bytes(k) - sizeof(Free));
}
void unpoison(void* block, size_t k) { sdk::unpoison_memory(block, class_bytes(k)); }

// A thread's free blocks. Trivially destructible and constant-initialised, so a take or a give_back
// reads it with one thread-local access and no initialisation guard; `drain` (below) frees the
// blocks when the thread exits.
struct ThreadBlocks {
  std::array<Free*, kClasses> heads;
  std::array<size_t, kClasses> counts;
  bool draining_registered;
  bool retired;  // drained: blocks freed later in this thread's exit go straight to the heap
};
thread_local ThreadBlocks mine{};

struct Drain {
  bool armed = false;  // set when the thread first keeps a block: that constructs the drain
  ~Drain() {
    for (size_t k = 0; k < kClasses; ++k)
      while (Free* block = mine.heads[k]) {
        mine.heads[k] = block->next;
        unpoison(block, k);
        ::operator delete(block);
      }
    mine.counts = {};
    mine.retired = true;
  }
};
thread_local Drain drain;

// The first block a thread keeps registers the drain (constructing it schedules its destructor).
void register_drain(ThreadBlocks& blocks) {
  drain.armed = true;
  blocks.draining_registered = true;
}

}  // namespace

void* take(size_t bytes) {
  if (bytes > kLargest) return ::operator new(bytes);  // not a pooled size: the heap's
  const size_t k = class_of(bytes);
  ThreadBlocks& blocks = sdk::thread_local_address(mine);
  Free* block = blocks.heads[k];
  if (block == nullptr) return ::operator new(class_bytes(k));
  blocks.heads[k] = block->next;
  --blocks.counts[k];
  unpoison(block, k);
  return block;
}

void give_back(void* block, size_t bytes) noexcept {
  if (block == nullptr) return;
  ThreadBlocks& blocks = sdk::thread_local_address(mine);
  const size_t k = class_of(bytes);
  if (bytes > kLargest || blocks.retired || blocks.counts[k] == most_blocks(k))
    return ::operator delete(block);
  if (!blocks.draining_registered) register_drain(blocks);
  blocks.heads[k] = new (block) Free{blocks.heads[k]};
  ++blocks.counts[k];
  poison(block, k);
}

size_t pooled(size_t bytes) { return bytes > kLargest ? 0 : mine.counts[class_of(bytes)]; }

}  // namespace tessera::object_pool
