// Collectives in a spawn: the members of a fibre gather; the last to arrive hands the gathering to
// the scheduler, which runs the collective once on its own stack (a rank's coroutine stack is small,
// and the collective machinery is the ordinary one).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "spawn/gathering.hpp"
#include "tessera/errors.hpp"

namespace tessera::spawned {

namespace {

// Whether two members' calls at the same point of a fibre differ.
bool differ(const comm::Meeting& a, const comm::Meeting& b) {
  // The same call site names its collective by the same literal: compared by address first.
  return (a.collective != b.collective && std::strcmp(a.collective, b.collective) != 0) ||
         a.agreed != b.agreed;
}

}  // namespace

// The rank's program waits here, on its own small stack, for as long as the collective takes: what
// only the first arrival or a mismatch needs lives in functions of its own, so that the frames a
// rank returns through once the collective has run are few cache lines.
void Scheduler::meet(comm::Meeting& part) {
  if (aborting_) throw Aborted{};
  Gathering& gathering = gathering_for(part);
  if (gathering.first != nullptr && differ(*gathering.first, part)) mismatch(gathering, part);
  gathering.parts[static_cast<size_t>(part.group_rank)] = &part;
  if (gathering.first == nullptr) {
    gathering.first = &part;
    gathering.first_rank = running_;
  }
  if (++gathering.arrived == gathering.hosted) {
    std::shared_ptr<Gathering> owner = close(gathering);
    if (gathering.elsewhere) {
      just_ready_ = owner.get();
      ready_.push_back(std::move(owner));  // runs when every process agrees (round())
    } else {
      to_run_ = std::move(owner);
    }
  }
  // The collective's result lands in this tensor, which the program reads first on waking.
  ranks_[static_cast<size_t>(running_)].reads_on_waking =
      part.tensors.empty() ? nullptr : part.tensors[0]->impl().get();
  std::exception_ptr error;
  {
    const Inside inside(*this, gathering);
    block(gathering);
    if (gathering.error) error = gathering.error;
  }
  if (error) std::rethrow_exception(error);
}

Scheduler::Gathering& Scheduler::gathering_for(const comm::Meeting& part) {
  // The whole world in rank order, however the group was given (one pointer compare for the default group).
  const std::vector<int>& world_fibre = world_->whole_world()->front();
  const bool whole = part.fibre.get() == &world_fibre || *part.fibre == world_fibre;
  std::shared_ptr<Gathering>& slot = whole ? whole_world_gathering_ : gatherings_[*part.fibre];
  if (slot == nullptr) open(slot, part, whole);
  return *slot;
}

void Scheduler::open(std::shared_ptr<Gathering>& slot, const comm::Meeting& part, bool whole) {
  slot = std::make_shared<Gathering>();
  slot->fibre = part.fibre;
  slot->whole = whole;
  slot->parts.assign(part.fibre->size(), nullptr);
  for (int r : *part.fibre) slot->hosted += hosts(r) ? 1 : 0;
  slot->elsewhere = slot->hosted < part.fibre->size();
  if (spread_) slot->ordinal = fibre_calls_[*part.fibre]++;
}

std::shared_ptr<Scheduler::Gathering> Scheduler::close(const Gathering& gathering) {
  if (gathering.whole) return std::exchange(whole_world_gathering_, nullptr);
  const auto at = gatherings_.find(*gathering.fibre);
  std::shared_ptr<Gathering> owner = std::move(at->second);
  gatherings_.erase(at);
  return owner;
}

void Scheduler::mismatch(Gathering& gathering, const comm::Meeting& part) {
  const Error mismatch(
      fmt::format("collective mismatch over ranks [{}]: rank {} called {} where rank {} called {}; every "
                  "member of a group "
                  "must make the same call (collective, dtype, shape, reduce op, root) at the same point",
                  fmt::join(*part.fibre, ", "), running_, part.describe(), gathering.first_rank,
                  gathering.first->describe()));
  gathering.error = std::make_exception_ptr(mismatch);
  gathering.complete = true;  // every member that arrived wakes with the error
  retire(close(gathering));   // the fibre's next collective gathers anew
  throw mismatch;
}

void Scheduler::retire(std::shared_ptr<Gathering> gathering) {
  if (gathering->inside > 0) met_.push_back(std::move(gathering));
}

Scheduler::Inside::Inside(Scheduler& scheduler, Gathering& gathering)
    : scheduler_(scheduler), gathering_(gathering) {
  ++gathering_.inside;
}

Scheduler::Inside::~Inside() {
  if (--gathering_.inside > 0) return;
  auto& met = scheduler_.met_;
  const auto at = std::find_if(met.begin(), met.end(), [&](const auto& g) { return g.get() == &gathering_; });
  if (at == met.end()) return;  // still gathering (its table owns it): the spawn is failing
  std::swap(*at, met.back());
  met.pop_back();
}

void Scheduler::run_gathering(Gathering& gathering, const comm::ThreadLabels& labels) {
  // Under the labels of the rank that arrived last (all members label a collective alike), with the
  // spawn's world bound and no rank's program running: the collective's tensors are local tensors.
  collective_scopes_.labels = labels;
  collective_scopes_.exchange(here_);
  try {
    const comm::Meeting& first = *gathering.first;
    if (gathering.whole)
      for (comm::Meeting* part : gathering.parts)
        if (part != nullptr) {  // the lead, which the run reads
          part->assembled = &whole_world_assembled_;
          break;
        }
    first.run(gathering.parts, first.run_group);
  } catch (...) {
    gathering.error = std::current_exception();
  }
  collective_scopes_.exchange(here_);
  gathering.complete = true;
}

void Scheduler::set_labels(Gathering& gathering, const comm::ThreadLabels& labels) {
  gathering.labels = labels;
}

}  // namespace tessera::spawned
