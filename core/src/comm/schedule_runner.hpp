// Runs a schedule's steps in dependency order over a data model; shared by the executor (real
// tensors) and the symbolic checker.
//
// Ranks take turns in rank order, each running until it must wait for a message. Sends are
// buffered, so the order in which ranks run changes nothing but the interleaving: every rank's
// steps are sequential and messages between two ranks arrive in the order sent. When no rank can
// move and some have steps left, the schedule deadlocks; a message never received is an unmatched
// send. Both are errors naming the ranks and steps, never a hang.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "comm/schedule.hpp"
#include "tessera/errors.hpp"

namespace tessera::comm {

// After a replay: throws when a rank this process plays (`plays`) has steps left (the schedule
// deadlocks) or a message between them was never received; `name` gives the rank messages name
// (the group rank, or its global rank). `mailbox` maps from * p + to to the messages left.
template <class Next, class Mailbox, class Plays, class Name>
void require_finished(const Schedule& schedule, const Next& next, const Mailbox& mailbox, Plays plays,
                      Name name) {
  const int p = schedule.group_size();
  // A deadlock or unmatched send in a large group can involve every rank; the first few say what
  // is wrong.
  constexpr size_t kListed = 8;
  std::string stuck;
  size_t stuck_ranks = 0;
  for (int r = 0; r < p; ++r)
    if (plays(r) && next[static_cast<size_t>(r)] < schedule.ranks[static_cast<size_t>(r)].steps.size() &&
        stuck_ranks++ < kListed)
      stuck += "\n  " + schedule.describe_step(r, next[static_cast<size_t>(r)]) + " waits forever";
  if (stuck_ranks > kListed) stuck += fmt::format("\n  ... and {} more ranks", stuck_ranks - kListed);
  if (stuck_ranks > 0) throw Error("the schedule deadlocks:" + stuck);
  std::vector<std::pair<int64_t, size_t>> unmatched;  // (from * p + to, messages left)
  for (const auto& [pair, messages] : mailbox)
    if (!messages.empty()) unmatched.emplace_back(pair, messages.size());
  if (unmatched.empty()) return;
  std::sort(unmatched.begin(), unmatched.end());
  std::string listed;
  for (size_t k = 0; k < unmatched.size() && k < kListed; ++k)
    listed += fmt::format("\n  {} message(s) from rank {} to rank {} never received", unmatched[k].second,
                          name(static_cast<int>(unmatched[k].first / p)),
                          name(static_cast<int>(unmatched[k].first % p)));
  if (unmatched.size() > kListed)
    listed += fmt::format("\n  ... and {} more pairs of ranks", unmatched.size() - kListed);
  throw Error("the schedule has unmatched sends:" + listed);
}

// Messages in flight, FIFO per (from, to) pair. They live in one pool, each linked to the next
// of its pair, so a schedule where every pair talks (direct: p^2 pairs) costs a slot per message
// and a small entry per pair rather than a queue object per pair (a deque allocates ~600 bytes).
template <class Payload>
class PairQueues {
 public:
  explicit PairQueues(int p) : p_(p) {}

  void push(int from, int to, Payload&& payload) {
    size_t slot = free_;
    if (slot == kNone) {
      slot = pool_.size();
      pool_.push_back(std::move(payload));
      next_.push_back(kNone);
    } else {
      free_ = next_[slot];
      pool_[slot] = std::move(payload);
      next_[slot] = kNone;
    }
    Ends& e = ends_[key(from, to)];
    if (e.size == 0)
      e.head = slot;
    else
      next_[e.tail] = slot;
    e.tail = slot;
    ++e.size;
    ++in_flight_;
  }
  // The oldest message from `from` to `to`, or null when there is none.
  Payload* front(int from, int to) {
    const auto it = ends_.find(key(from, to));
    return it == ends_.end() || it->second.size == 0 ? nullptr : &pool_[it->second.head];
  }
  void pop(int from, int to) {
    Ends& e = ends_.find(key(from, to))->second;
    const size_t slot = e.head;
    e.head = next_[slot];
    --e.size;
    --in_flight_;
    pool_[slot] = Payload{};  // releases what the message held now, not when the slot is reused
    next_[slot] = free_;
    free_ = slot;
  }

  // What require_finished reads: (from * p + to, messages left) for every pair.
  struct Left {
    size_t count;
    bool empty() const { return count == 0; }
    size_t size() const { return count; }
  };
  std::vector<std::pair<int64_t, Left>> left() const {
    std::vector<std::pair<int64_t, Left>> out;
    if (in_flight_ == 0) return out;  // the usual end: no need to visit every pair
    for (const auto& [pair, e] : ends_)
      if (e.size > 0) out.push_back({pair, {e.size}});
    return out;
  }

 private:
  static constexpr size_t kNone = ~size_t{0};
  struct Ends {
    size_t head = kNone;
    size_t tail = kNone;
    size_t size = 0;
  };
  int64_t key(int from, int to) const { return int64_t{from} * p_ + to; }

  int p_;
  std::vector<Payload> pool_;
  std::vector<size_t> next_;  // per slot: the next message of its pair, or the next free slot
  size_t free_ = kNone;
  size_t in_flight_ = 0;
  std::unordered_map<int64_t, Ends> ends_;
};

// Model: has a type Payload with a member `int64_t count`, and
//   Payload capture(int rank, const tessera_chunk& source);
//   void deliver(int rank, const tessera_chunk& destination, Payload& payload, bool reduce);
//   void copy(int rank, const tessera_chunk& destination, const tessera_chunk& source);
//   void reduce(int rank, const tessera_chunk& destination, const tessera_chunk& source);
template <class Model>
void run_schedule(const Schedule& schedule, Model& model) {
  const int p = schedule.group_size();
  std::vector<size_t> next(static_cast<size_t>(p), 0);
  // Only pairs that exchange messages get an entry: a dense p x p table would cost more than the
  // schedule for large groups.
  PairQueues<typename Model::Payload> mailbox(p);

  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const std::vector<Step>& steps = schedule.ranks[static_cast<size_t>(r)].steps;
      for (size_t& i = next[static_cast<size_t>(r)]; i < steps.size(); ++i) {
        const Step& step = steps[i];
        if (step.kind == StepKind::Send) {
          mailbox.push(r, step.peer, model.capture(r, step.chunk));
        } else if (step.kind == StepKind::Recv || step.kind == StepKind::RecvReduce) {
          auto* incoming = mailbox.front(step.peer, r);
          if (incoming == nullptr) break;  // wait for the peer
          if (incoming->count != step.chunk.count)
            throw Error(fmt::format("{} expects {} elements, but the message from rank {} has {}",
                                    schedule.describe_step(r, i), step.chunk.count, step.peer,
                                    incoming->count));
          model.deliver(r, step.chunk, *incoming, step.kind == StepKind::RecvReduce);
          mailbox.pop(step.peer, r);
        } else if (step.kind == StepKind::Copy) {
          model.copy(r, step.chunk, step.source);
        } else {
          model.reduce(r, step.chunk, step.source);
        }
        progress = true;
      }
    }
  }

  require_finished(
      schedule, next, mailbox.left(), [](int) { return true; }, [](int r) { return r; });
}

}  // namespace tessera::comm
