// What the layers above keep per world (comm's mailbox, observe's listeners), held by the world
// without knowing its type. Each slot is made on first use by a maker its owning layer installs
// when the library loads, so that a layer below the owner (which cannot name the type) can still
// ask for the slot, and the world layer names no layer above it.
//
// A world has two tables of slots: its own, and those it shares with the worlds made inside it (a
// LocalMode opened without an explicit World, a ts::spawn), which is how a CommCounter or TraceScope
// sees the modes its thread opens inside it (world/world.hpp).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

namespace tessera::world {

enum class Slot : size_t {
  mailbox,         // comm::Mailbox: point-to-point messages between the world's ranks (the world's own)
  observer,        // world::Observer: what watches the world (shared with the worlds made inside it)
  prepared_calls,  // comm's prepared collectives across processes (comm/prepared_call.hpp; the world's own)
  count,
};

// Whether `slot` lives in the table a world shares with the worlds made inside it.
constexpr bool shared_with_inner_worlds(Slot slot) { return slot == Slot::observer; }

// Makes a slot's value: the owning layer's object, as the pointer type the slot's readers agree on
// (the comment at each Slot names it).
using SlotMaker = std::shared_ptr<void> (*)();

// Installed once per slot by its owning layer while the library loads; a later install replaces it.
void install_slot_maker(Slot slot, SlotMaker maker);

class SlotTable {
 public:
  // The slot's value, made on first use (once, under the table's lock) by `make`, or when that is
  // null by the maker installed for the slot; null when neither is there.
  void* find_or_make(Slot slot, SlotMaker make = nullptr);
  // The same, as an owning pointer (for what must outlive the world: a counter keeps its listeners).
  std::shared_ptr<void> shared(Slot slot, SlotMaker make = nullptr);

 private:
  static constexpr size_t kSlots = static_cast<size_t>(Slot::count);
  // Read without the lock on every collective and every per-rank op; written once, under it.
  std::array<std::atomic<void*>, kSlots> values_{};
  std::array<std::shared_ptr<void>, kSlots> owners_;
  std::mutex mutex_;
};

}  // namespace tessera::world
