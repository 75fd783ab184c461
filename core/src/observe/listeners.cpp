#include "observe/listeners.hpp"

#include "observe/comm_events.hpp"

namespace tessera::observe {
namespace {

// The slot holds a world::Observer* (of a comm::CommObserver): the pointer every layer that
// reports casts it back to.
std::shared_ptr<void> make_listeners() {
  return std::shared_ptr<void>(std::shared_ptr<world::Observer>(std::make_shared<Listeners>()));
}

// Installed when the library loads, so that a world's observer exists whichever layer asks first.
const bool listeners_maker_installed =
    (world::install_slot_maker(world::Slot::observer, &make_listeners), true);

}  // namespace

Listeners::Listeners()
    : id([] {
        static std::atomic<uint64_t> next{0};  // an id source, not shared state: ids are only compared
        return next++;
      }()) {}

// Reports come from the calling thread, whose current world is the one this observes.
bool Listeners::wants_rank_ops() { return observe::wants_rank_ops(); }
void Listeners::rank_op(const char* op, int rank, double seconds) { report_rank_op(op, rank, seconds); }
bool Listeners::wants_collectives() { return observe::wants_collectives(); }
void Listeners::collective(const comm::Schedule& schedule, const std::vector<int>& members,
                           const comm::CostEstimate& cost) {
  observe::report_collective(schedule, members, cost);
}
bool Listeners::call_begins() { return observe::begin_collective_call(); }
void Listeners::call_ends() { observe::end_collective_call(); }
void Listeners::implicit_redistribution(const std::string& op, int64_t input, const std::string& from,
                                        const std::string& to) {
  observe::report_implicit(op, input, from, to);
}

Listeners& listeners_of(world::WorldState& w) {
  return static_cast<Listeners&>(
      *static_cast<world::Observer*>(w.slot(world::Slot::observer, &make_listeners)));
}

std::shared_ptr<Listeners> shared_listeners_of(world::WorldState& w) {
  std::shared_ptr<void> slot = w.shared_slot(world::Slot::observer, &make_listeners);
  auto* listeners = static_cast<Listeners*>(static_cast<world::Observer*>(slot.get()));
  return std::shared_ptr<Listeners>(std::move(slot), listeners);  // shares the slot's ownership
}

}  // namespace tessera::observe
