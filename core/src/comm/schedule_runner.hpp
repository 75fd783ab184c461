// Runs a schedule's steps in dependency order over a data model; shared by the executor (real
// tensors) and the symbolic checker.
//
// Ranks take turns in rank order, each running until it must wait for a message. Sends are
// buffered, so the order in which ranks run changes nothing but the interleaving: every rank's
// steps are sequential and messages between two ranks arrive in the order sent. When no rank can
// move and some have steps left, the schedule deadlocks; a message never received is an unmatched
// send. Both are errors naming the ranks and steps, never a hang.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/schedule.hpp"
#include "tessera/errors.hpp"

namespace tessera::comm {

// Model: has a type Payload with a member `int64_t count`, and
//   Payload capture(int rank, const tessera_chunk& source);
//   void deliver(int rank, const tessera_chunk& destination, Payload& payload, bool reduce);
//   void copy(int rank, const tessera_chunk& destination, const tessera_chunk& source);
//   void reduce(int rank, const tessera_chunk& destination, const tessera_chunk& source);
template <class Model>
void run_schedule(const Schedule& schedule, Model& model) {
  const int p = schedule.group_size();
  std::vector<size_t> next(static_cast<size_t>(p), 0);
  std::vector<std::deque<typename Model::Payload>> mailbox(static_cast<size_t>(p) * static_cast<size_t>(p));
  auto queue = [&](int from, int to) -> auto& { return mailbox[static_cast<size_t>(from * p + to)]; };

  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const std::vector<Step>& steps = schedule.ranks[static_cast<size_t>(r)].steps;
      for (size_t& i = next[static_cast<size_t>(r)]; i < steps.size(); ++i) {
        const Step& step = steps[i];
        if (step.kind == StepKind::Send) {
          queue(r, step.peer).push_back(model.capture(r, step.chunk));
        } else if (step.kind == StepKind::Recv || step.kind == StepKind::RecvReduce) {
          auto& incoming = queue(step.peer, r);
          if (incoming.empty()) break;  // wait for the peer
          if (incoming.front().count != step.chunk.count)
            throw Error(fmt::format("schedule '{}': {} expects {} elements, but the message from rank {} has {}",
                                    schedule.algorithm, schedule.describe_step(r, i), step.chunk.count, step.peer,
                                    incoming.front().count));
          model.deliver(r, step.chunk, incoming.front(), step.kind == StepKind::RecvReduce);
          incoming.pop_front();
        } else if (step.kind == StepKind::Copy) {
          model.copy(r, step.chunk, step.source);
        } else {
          model.reduce(r, step.chunk, step.source);
        }
        progress = true;
      }
    }
  }

  std::string stuck;
  for (int r = 0; r < p; ++r)
    if (next[static_cast<size_t>(r)] < schedule.ranks[static_cast<size_t>(r)].steps.size())
      stuck += "\n  " + schedule.describe_step(r, next[static_cast<size_t>(r)]) + " waits forever";
  if (!stuck.empty())
    throw Error(fmt::format("schedule '{}' for {} deadlocks:{}", schedule.algorithm,
                            collective_name(schedule.request.collective), stuck));
  std::string unmatched;
  for (int from = 0; from < p; ++from)
    for (int to = 0; to < p; ++to)
      if (!queue(from, to).empty())
        unmatched += fmt::format("\n  {} message(s) from rank {} to rank {} never received", queue(from, to).size(),
                                 from, to);
  if (!unmatched.empty())
    throw Error(fmt::format("schedule '{}' for {} has unmatched sends:{}", schedule.algorithm,
                            collective_name(schedule.request.collective), unmatched));
}

}  // namespace tessera::comm
