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

void Scheduler::meet(comm::Meeting& part) {
  if (aborting_) throw Aborted{};
  const int rank = running_;
  // The whole world in rank order, however the group was given (one pointer compare for the default group).
  const std::vector<int>& world_fibre = world_->whole_world()->front();
  const bool whole = part.fibre.get() == &world_fibre || *part.fibre == world_fibre;
  std::shared_ptr<Gathering>& slot = whole ? whole_world_gathering_ : gatherings_[*part.fibre];
  if (slot == nullptr) {
    slot = std::make_shared<Gathering>();
    slot->fibre = part.fibre;
    slot->parts.assign(part.fibre->size(), nullptr);
    for (int r : *part.fibre) slot->hosted += hosts(r) ? 1 : 0;
    slot->elsewhere = slot->hosted < part.fibre->size();
    if (spread_) slot->ordinal = fibre_calls_[*part.fibre]++;
  }
  const std::shared_ptr<Gathering> gathering = slot;
  // Leaves the table once complete or failed: the fibre's next collective gathers anew.
  const auto close = [&] {
    if (whole)
      whole_world_gathering_.reset();
    else
      gatherings_.erase(*part.fibre);
  };
  if (gathering->first != nullptr && (std::strcmp(gathering->first->collective, part.collective) != 0 ||
                                      gathering->first->agreed != part.agreed)) {
    const Error mismatch(
        fmt::format("collective mismatch over ranks [{}]: rank {} called {} where rank {} called {}; every "
                    "member of a group must "
                    "make the same call (collective, dtype, shape, reduce op, root) at the same point",
                    fmt::join(*part.fibre, ", "), rank, part.describe(), gathering->first_rank,
                    gathering->first->describe()));
    gathering->error = std::make_exception_ptr(mismatch);
    gathering->complete = true;  // every member that arrived wakes with the error
    close();
    throw mismatch;
  }
  gathering->parts[static_cast<size_t>(part.group_rank)] = &part;
  if (gathering->first == nullptr) {
    gathering->first = &part;
    gathering->first_rank = rank;
  }
  if (++gathering->arrived == gathering->hosted) {
    close();
    if (gathering->elsewhere) {
      ready_.push_back(gathering);  // runs when every process agrees (round())
      just_ready_ = gathering;
    } else {
      to_run_ = gathering;
    }
  }
  block(*gathering);
  if (gathering->error) std::rethrow_exception(gathering->error);
}

void Scheduler::run_gathering(Gathering& gathering, const comm::ThreadLabels& labels) {
  // Under the labels of the rank that arrived last (all members label a collective alike), with the
  // spawn's world bound and no rank's program running: the collective's tensors are local tensors.
  collective_scopes_.labels = labels;
  collective_scopes_.exchange(here_);
  try {
    const comm::Meeting& first = *gathering.first;
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
