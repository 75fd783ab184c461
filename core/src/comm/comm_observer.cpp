#include "comm/comm_observer.hpp"

#include "world/world.hpp"

namespace tessera::comm {

CommObserver* current_observer() {
  // Every world's observer is a CommObserver: observe, which makes them, implements this interface.
  return static_cast<CommObserver*>(world::observer_of(world::current()));
}

bool wants_collectives() {
  CommObserver* observer = current_observer();
  return observer != nullptr && observer->wants_collectives();
}

void report_collective(const Schedule& schedule, const std::vector<int>& members, const CostEstimate& cost) {
  if (CommObserver* observer = current_observer()) observer->collective(schedule, members, cost);
}

void report_implicit(const std::string& op, int64_t input, const std::string& from, const std::string& to) {
  if (CommObserver* observer = current_observer()) observer->implicit_redistribution(op, input, from, to);
}

CollectiveCall::CollectiveCall() {
  CommObserver* observer = current_observer();
  outermost_ = observer != nullptr && observer->call_begins();
}

CollectiveCall::~CollectiveCall() {
  if (!outermost_) return;
  if (CommObserver* observer = current_observer()) observer->call_ends();
}

}  // namespace tessera::comm
