#include "world/world_slots.hpp"

namespace tessera::world {
namespace {

// One maker per slot, set while the library loads (before any world asks) and only read after:
// code, not state that one world could change for another. constinit, so that an installer
// running in another file's static initialization finds it ready.
constinit std::array<std::atomic<SlotMaker>, static_cast<size_t>(Slot::count)> slot_makers{};

}  // namespace

void install_slot_maker(Slot slot, SlotMaker maker) { slot_makers[static_cast<size_t>(slot)].store(maker); }

void* SlotTable::find_or_make(Slot slot, SlotMaker make) {
  const size_t index = static_cast<size_t>(slot);
  if (void* value = values_[index].load(std::memory_order_acquire)) return value;
  return shared(slot, make).get();
}

std::shared_ptr<void> SlotTable::shared(Slot slot, SlotMaker make) {
  const size_t index = static_cast<size_t>(slot);
  std::lock_guard lock(mutex_);
  if (!owners_[index]) {
    const SlotMaker maker = make != nullptr ? make : slot_makers[index].load();
    if (maker == nullptr) return nullptr;
    owners_[index] = maker();
    values_[index].store(owners_[index].get(), std::memory_order_release);
  }
  return owners_[index];
}

}  // namespace tessera::world
