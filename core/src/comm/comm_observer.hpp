// What comm and the layers above it report about communication: each collective's run and each
// implicit redistribution. The interface is declared here, with the collectives, and implemented by
// observe (its counters and traces), which installs each world's observer (world/observer.hpp): the
// layers that report never include observe. Cheap when nobody listens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/cost_model.hpp"
#include "comm/schedule.hpp"
#include "world/observer.hpp"

namespace tessera::comm {

class CommObserver : public world::Observer {
 public:
  // True when a counter or a trace wants collective reports (the caller then pays for a cost
  // estimate).
  virtual bool wants_collectives() = 0;
  // One fibre's run of a collective.
  virtual void collective(const Schedule& schedule, const std::vector<int>& members,
                          const CostEstimate& cost) = 0;
  // An API call (which may run several fibres) begins on the calling thread; false when one was
  // already in progress there (the outer call reports).
  virtual bool call_begins() = 0;
  // The outermost call that call_begins() opened on the calling thread ends.
  virtual void call_ends() = 0;
  // A user op (`op`) redistributed its input `input` from placements `from` to `to`.
  virtual void implicit_redistribution(const std::string& op, int64_t input, const std::string& from,
                                       const std::string& to) = 0;
};

// The calling thread's world's observer; null while none is installed.
CommObserver* current_observer();

// The reports, to the calling thread's world's observer.
bool wants_collectives();
void report_collective(const Schedule& schedule, const std::vector<int>& members, const CostEstimate& cost);
void report_implicit(const std::string& op, int64_t input, const std::string& from, const std::string& to);

// One API call's scope: inside it the fibres of the call are counted as one call (they run at the
// same time: the slowest fibre's time, the most bytes any rank sends); each fibre still gets its own
// trace slices.
class CollectiveCall {
 public:
  CollectiveCall();
  ~CollectiveCall();
  CollectiveCall(const CollectiveCall&) = delete;
  CollectiveCall& operator=(const CollectiveCall&) = delete;

 private:
  bool outermost_ = false;  // only the outermost call on a thread reports
};

}  // namespace tessera::comm
