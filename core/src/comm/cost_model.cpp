#include "comm/cost_model.hpp"

#include <algorithm>
#include <deque>
#include <map>

namespace tessera::comm {
namespace {

using DirectedLink = std::pair<int, int>;

struct Message {
  int64_t bytes;
  std::vector<DirectedLink> hops;
  std::vector<Link> links;  // hops[i]'s link
  double depart = 0.0;
  double duration = 0.0;  // latency + bytes / (bandwidth / sharing), summed over hops
  int sharing = 1;        // most messages seen on one of its links at once (itself included)
};

double duration(const Message& m) {
  double t = 0.0;
  for (const Link& l : m.links) t += l.latency + static_cast<double>(m.bytes) * m.sharing / l.bandwidth;
  return t;
}

// Replays the schedule in dependency order. Sends depart at the sender's clock; a receive ends
// when its message arrives (depart + duration). Returns per-step timings and fills departures.
std::vector<StepTiming> replay(const Schedule& schedule, std::vector<Message>& messages) {
  const int p = schedule.group_size();
  std::vector<double> clock(static_cast<size_t>(p), 0.0);
  std::vector<size_t> next(static_cast<size_t>(p), 0);
  std::vector<std::deque<size_t>> mailbox(static_cast<size_t>(p) * static_cast<size_t>(p));
  std::vector<StepTiming> timings;
  size_t sent = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const auto& steps = schedule.ranks[static_cast<size_t>(r)].steps;
      double& now = clock[static_cast<size_t>(r)];
      for (size_t& i = next[static_cast<size_t>(r)]; i < steps.size(); ++i) {
        const Step& step = steps[i];
        if (step.kind == StepKind::Send) {
          messages[sent].depart = now;
          mailbox[static_cast<size_t>(r * p + step.peer)].push_back(sent++);
          timings.push_back({r, i, now, now});
        } else if (step.kind == StepKind::Recv || step.kind == StepKind::RecvReduce) {
          auto& queue = mailbox[static_cast<size_t>(step.peer * p + r)];
          if (queue.empty()) break;
          const Message& m = messages[queue.front()];
          queue.pop_front();
          const double start = now;
          now = std::max(now, m.depart + m.duration);
          timings.push_back({r, i, start, now});
        }
        progress = true;
      }
    }
  }
  return timings;
}

}  // namespace

int64_t CostEstimate::max_bytes_sent() const {
  return bytes_sent.empty() ? 0 : *std::max_element(bytes_sent.begin(), bytes_sent.end());
}

CostEstimate estimate(const Schedule& schedule, const std::vector<int>& members, const Topology& topology,
                      size_t itemsize) {
  const int p = schedule.group_size();
  CostEstimate result;
  result.bytes_sent.assign(static_cast<size_t>(p), 0);

  // Messages in the order the replay sends them (rank by rank, as the runner interleaves them).
  std::vector<Message> messages;
  {
    std::vector<size_t> next(static_cast<size_t>(p), 0);
    std::vector<std::deque<int>> pending(static_cast<size_t>(p) * static_cast<size_t>(p));
    for (bool progress = true; progress;) {
      progress = false;
      for (int r = 0; r < p; ++r) {
        const auto& steps = schedule.ranks[static_cast<size_t>(r)].steps;
        for (size_t& i = next[static_cast<size_t>(r)]; i < steps.size(); ++i) {
          const Step& step = steps[i];
          if (step.kind == StepKind::Send) {
            Message m;
            m.bytes = step.chunk.count * static_cast<int64_t>(itemsize);
            const int from = members[static_cast<size_t>(r)], to = members[static_cast<size_t>(step.peer)];
            const std::vector<int> path = topology.path(from, to, m.bytes);
            for (size_t h = 1; h < path.size(); ++h) {
              m.hops.emplace_back(path[h - 1], path[h]);
              m.links.push_back(topology.link(path[h - 1], path[h]));
            }
            m.duration = duration(m);
            messages.push_back(std::move(m));
            result.bytes_sent[static_cast<size_t>(r)] += messages.back().bytes;
            pending[static_cast<size_t>(r * p + step.peer)].push_back(1);
          } else if (step.kind == StepKind::Recv || step.kind == StepKind::RecvReduce) {
            auto& queue = pending[static_cast<size_t>(step.peer * p + r)];
            if (queue.empty()) break;
            queue.pop_front();
          }
          progress = true;
        }
      }
    }
  }

  // Uncontended timing first; then messages overlapping on a directed link share it, re-timed
  // until the sharing settles (a few rounds; the model is an estimate, not a network simulator).
  // Only messages on the same directed link can share it: compare within each link's users
  // (a direct collective over p ranks has p^2 messages but one per link).
  std::map<DirectedLink, std::vector<size_t>> users;
  for (size_t m = 0; m < messages.size(); ++m)
    if (messages[m].bytes != 0)
      for (const DirectedLink& hop : messages[m].hops) users[hop].push_back(m);
  result.steps = replay(schedule, messages);
  for (int round = 0; round < 4; ++round) {
    std::vector<int> sharing(messages.size(), 1);
    for (const auto& [hop, on_link] : users) {
      for (size_t m : on_link) {
        int others = 0;
        for (size_t o : on_link) {
          const bool overlap = messages[o].depart < messages[m].depart + messages[m].duration &&
                               messages[m].depart < messages[o].depart + messages[o].duration;
          if (o != m && overlap) ++others;
        }
        sharing[m] = std::max(sharing[m], 1 + others);
      }
    }
    bool changed = false;
    for (size_t m = 0; m < messages.size(); ++m) {
      changed = changed || sharing[m] != messages[m].sharing;
      messages[m].sharing = sharing[m];
      messages[m].duration = duration(messages[m]);
    }
    if (!changed) break;
    result.steps = replay(schedule, messages);
  }
  for (const StepTiming& s : result.steps) result.seconds = std::max(result.seconds, s.end);
  return result;
}

}  // namespace tessera::comm
