// How Storages tell the memory counters (ts::MemoryCounter, in the observe layer) about their
// bytes. The observe layer, above this one, knows the calling thread's world and its counters and
// installs the hooks once, when the library loads; until then nothing is counted.
//
// A Storage is one rank's identity for its bytes (tensor_impl.hpp), so it is the unit counted: a
// shared replica counts for every rank whose Storage holds it, as each rank of a cluster would hold
// its own copy, and the views of one Storage count once. A Storage made while a counter watches
// its world carries a record; one made while none does is never counted (see tag_memory for how
// such bytes join later).
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

namespace tessera {
class Tensor;
struct Storage;
}  // namespace tessera

namespace tessera::detail {

// The observe layer's account of one Storage's bytes: their category, the ranks holding them and
// the counters that see them.
struct MemoryRecord;

// made()'s rank for bytes no rank holds yet: a replica counts once a local tensor holds it.
inline constexpr int kRankOfLocalTensor = -2;

struct MemoryHooks {
  // A Storage of `bytes` was made on this thread. `rank` >= 0 names the rank holding it;
  // kRankOfLocalTensor leaves it to the local tensor that will hold it; -1 to the thread (the rank
  // task it runs, else the rule for plain tensors). `category` null: the thread's
  // (ts::MemoryCategory). Null when no memory counter watches the calling thread's world.
  MemoryRecord* (*made)(size_t bytes, int rank, const std::string* category) = nullptr;
  void (*gone)(MemoryRecord* record) = nullptr;               // the Storage is gone: deletes the record
  void (*held_by)(MemoryRecord* record, int rank) = nullptr;  // a local tensor holds it as `rank`'s shard
  void (*retagged)(MemoryRecord* record, const std::string& category) = nullptr;
  void (*present)(MemoryRecord* record,
                  bool present) = nullptr;  // the bytes were released (false) or restored
};

void install_memory_hooks(MemoryHooks hooks);

// Whether any memory counter is alive anywhere in the process. Only a hint that keeps allocation
// at one relaxed load while no counter is: the hooks then look for one in the calling thread's
// world, and nothing of another world is ever counted.
extern constinit std::atomic<int> memory_counters_alive;
inline bool memory_watched() { return memory_counters_alive.load(std::memory_order_relaxed) > 0; }

// Called by Storage: the record of bytes made now (null when nobody watches), and their end. A
// replica (another rank's identical shard) counts once a local tensor holds it.
MemoryRecord* memory_made(size_t bytes, bool replica = false);
void memory_gone(MemoryRecord* record);
// The bytes of `storage` left (release_storage) or came back (restore_storage).
void memory_present(Storage& storage, bool present);
// `storage` is `rank`'s shard of a local tensor (called as local tensors are built): its bytes count
// for that rank. Bytes counted by the world's rule for plain tensors move there.
void memory_held_by(const Storage& storage, int rank);

// Moves the bytes of `t` (every shard's, for a local tensor) to `category`. Bytes made while no
// counter watched start being counted now, under `category`, when a counter watches the calling
// thread's world.
void tag_memory(const Tensor& t, const std::string& category);

}  // namespace tessera::detail
