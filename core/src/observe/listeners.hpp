// Who observes a world: the comm counters, memory counters and trace scopes alive on it. Worlds made by a
// LocalMode without an explicit World share their creator's listeners (world/world.hpp says why).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>

#include "tessera/observe.hpp"
#include "comm/comm_observer.hpp"
#include "world/world.hpp"

namespace tessera::observe {

class TraceRecorder;

// A world's observer (its Slot::observer, shared with the worlds made inside it).
struct Listeners : comm::CommObserver {
  Listeners();
  bool wants_rank_ops() override;
  void rank_op(const char* op, int rank, double seconds) override;
  bool wants_collectives() override;
  void collective(const comm::Schedule& schedule, const std::vector<int>& members,
                  const comm::CostEstimate& cost) override;
  bool call_begins() override;
  void call_ends() override;
  void implicit_redistribution(const std::string& op, int64_t input, const std::string& from,
                               const std::string& to) override;

  const uint64_t id;  // distinct per Listeners in this process: a trace's process id for them
  std::mutex mutex;   // guards the sets and every counter's state
  std::set<CommCounter::State*> counters;
  std::set<TraceRecorder*> recorders;
  std::set<MemoryCounter::State*> memory_counters;
  // Memory counters made so far, each's serial: a counter sees a storage's bytes when it was made
  // before them (observe/memory_counter.cpp changes both under the lock, with the set).
  uint64_t memory_counters_made = 0;
  // Read without the lock on every op, so that nobody listening costs two loads. Each equals its
  // set's size: only add and remove (for memory counters, memory_counter.cpp) change them.
  std::atomic<int> live_counters{0};
  std::atomic<int> live_recorders{0};
  std::atomic<int> live_memory_counters{0};

  void add(CommCounter::State* counter) { change(counters, live_counters, counter, true); }
  void remove(CommCounter::State* counter) { change(counters, live_counters, counter, false); }
  void add(TraceRecorder* recorder) { change(recorders, live_recorders, recorder, true); }
  void remove(TraceRecorder* recorder) { change(recorders, live_recorders, recorder, false); }

 private:
  template <class T>
  void change(std::set<T*>& set, std::atomic<int>& live, T* listener, bool adding) {
    std::lock_guard lock(mutex);
    if (adding)
      set.insert(listener);
    else
      set.erase(listener);
    live.store(static_cast<int>(set.size()));
  }
};

// `w`'s listeners, made on first use; the shared form keeps them alive beyond the world (a counter
// made in a LocalMode's world outlives the mode).
Listeners& listeners_of(world::WorldState& w);
std::shared_ptr<Listeners> shared_listeners_of(world::WorldState& w);

}  // namespace tessera::observe
