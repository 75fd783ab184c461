#include "tensor/memory_accounting.hpp"

#include "tensor/tensor_impl.hpp"
#include "tessera/rank_map.hpp"
#include "tessera/tensor.hpp"

namespace tessera::detail {
namespace {

// Written once while the library loads (a static initialiser in the observe layer), read after.
constinit MemoryHooks memory_hooks{};

// The record of `storage`, made now under `category` if it has none and a counter watches.
MemoryRecord* record_of(Storage& storage, int rank, const std::string& category) {
  MemoryRecord* record = storage.memory.load(std::memory_order_acquire);
  if (record != nullptr || memory_hooks.made == nullptr || !memory_watched()) return record;
  MemoryRecord* made = memory_hooks.made(storage.bytes, rank, &category);
  if (made == nullptr) return nullptr;
  // Two threads tagging one tensor at once: one record wins, the other is dropped.
  if (storage.memory.compare_exchange_strong(record, made, std::memory_order_acq_rel)) {
    if (storage.released()) memory_hooks.present(made, false);  // counted once restored
    return made;
  }
  memory_hooks.gone(made);
  return record;
}

void tag_storage(Storage& storage, int rank, const std::string& category) {
  MemoryRecord* record = storage.memory.load(std::memory_order_acquire);
  if (record == nullptr) {
    record_of(storage, rank, category);  // made under `category`, held by `rank`
    return;
  }
  memory_hooks.retagged(record, category);
  if (rank >= 0) memory_hooks.held_by(record, rank);
}

}  // namespace

void install_memory_hooks(MemoryHooks hooks) { memory_hooks = hooks; }

constinit std::atomic<int> memory_counters_alive{0};

MemoryRecord* memory_made(size_t bytes, bool replica) {
  return memory_hooks.made != nullptr ? memory_hooks.made(bytes, replica ? kRankOfLocalTensor : -1, nullptr)
                                      : nullptr;
}

void memory_gone(MemoryRecord* record) {
  if (record != nullptr && memory_hooks.gone != nullptr) memory_hooks.gone(record);
}

void memory_present(Storage& storage, bool present) {
  if (MemoryRecord* record = storage.memory.load(std::memory_order_acquire))
    memory_hooks.present(record, present);
}

void memory_held_by(const Storage& storage, int rank) {
  if (MemoryRecord* record = storage.memory.load(std::memory_order_acquire))
    memory_hooks.held_by(record, rank);
}

void tag_memory(const Tensor& t, const std::string& category) {
  if (!t.defined()) return;
  if (memory_hooks.retagged == nullptr) return;
  if (!t.is_local()) {
    tag_storage(*t.impl()->storage(), -1, category);
    return;
  }
  for (const auto& [rank, shard] : t.shards()) tag_storage(*shard.impl()->storage(), rank, category);
}

}  // namespace tessera::detail
