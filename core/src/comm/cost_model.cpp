#include "comm/cost_model.hpp"

#include <algorithm>
#include <map>

#include "comm/schedule_runner.hpp"

namespace tessera::comm {
namespace {

using DirectedLink = std::pair<int, int>;

// A message's hops live in Route's flat arrays (a collective over p ranks sends up to p^2
// messages, most of one hop: a vector per message would be most of the cost of estimating it).
struct Message {
  int64_t bytes;
  size_t first_hop = 0;
  size_t hop_count = 0;
  double depart = 0.0;
  double duration = 0.0;  // latency + bytes / (bandwidth / sharing), summed over hops
  int sharing = 1;        // most messages seen on one of its links at once (itself included)
};

struct Route {
  std::vector<DirectedLink> hops;
  std::vector<Link> links;  // hops[i]'s link
};

double duration(const Message& m, const Route& route) {
  double t = 0.0;
  for (size_t h = m.first_hop; h < m.first_hop + m.hop_count; ++h) {
    const Link& l = route.links[h];
    t += l.latency + static_cast<double>(m.bytes) * m.sharing / l.bandwidth;
  }
  return t;
}

// Replays the schedule in dependency order. Sends depart at the sender's clock; a receive ends
// when its message arrives (depart + duration). Returns per-step timings and fills departures.
std::vector<StepTiming> replay(const Schedule& schedule, std::vector<Message>& messages) {
  const int p = schedule.group_size();
  std::vector<double> clock(static_cast<size_t>(p), 0.0);
  std::vector<size_t> next(static_cast<size_t>(p), 0);
  PairQueues<size_t> mailbox(p);  // message indices, FIFO per (sender, receiver) as delivered
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
          mailbox.push(r, step.peer, sent++);
          timings.push_back({r, i, now, now});
        } else if (step.kind == StepKind::Recv || step.kind == StepKind::RecvReduce) {
          const size_t* arrived = mailbox.front(step.peer, r);
          if (arrived == nullptr) break;
          const Message& m = messages[*arrived];
          mailbox.pop(step.peer, r);
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

// For each of the messages on one link, how many others are in flight on it at the same time: the
// half-open intervals [depart, depart + duration) that overlap its own. Counted from the sorted
// departures and arrivals (a link of a direct collective on a ring carries thousands of messages,
// so comparing every pair is too slow); the same comparisons as the pairwise test, so the same
// counts.
std::vector<int> overlapping(const std::vector<Message>& messages, const std::vector<size_t>& on_link) {
  const auto end = [&](size_t m) { return messages[m].depart + messages[m].duration; };
  std::vector<double> departs, ends;
  for (size_t m : on_link) {
    departs.push_back(messages[m].depart);
    ends.push_back(end(m));
  }
  std::sort(departs.begin(), departs.end());
  std::sort(ends.begin(), ends.end());
  std::vector<int> others;
  others.reserve(on_link.size());
  for (size_t m : on_link) {
    const double from = messages[m].depart, to = end(m);
    if (from < to) {
      // Departed before m arrives, less those that arrived by the time m departed (they departed
      // before m arrives too, since from < to), less m itself.
      const auto departed = std::lower_bound(departs.begin(), departs.end(), to) - departs.begin();
      const auto arrived = std::upper_bound(ends.begin(), ends.end(), from) - ends.begin();
      others.push_back(static_cast<int>(departed - arrived - 1));
    } else {
      // A message that takes no time (as far as doubles tell): the pairwise test, rare.
      int count = 0;
      for (size_t o : on_link) count += o != m && messages[o].depart < to && from < end(o) ? 1 : 0;
      others.push_back(count);
    }
  }
  return others;
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
  Route route;
  {
    std::vector<size_t> next(static_cast<size_t>(p), 0);
    PairQueues<size_t> pending(p);
    std::vector<int> path;
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
            topology.path_into(from, to, m.bytes, path);
            m.first_hop = route.hops.size();
            for (size_t h = 1; h < path.size(); ++h) {
              route.hops.emplace_back(path[h - 1], path[h]);
              route.links.push_back(topology.link(path[h - 1], path[h]));
            }
            m.hop_count = route.hops.size() - m.first_hop;
            m.duration = duration(m, route);
            result.bytes_sent[static_cast<size_t>(r)] += m.bytes;
            pending.push(r, step.peer, messages.size());
            messages.push_back(m);
          } else if (step.kind == StepKind::Recv || step.kind == StepKind::RecvReduce) {
            if (pending.front(step.peer, r) == nullptr) break;
            pending.pop(step.peer, r);
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
      for (size_t h = messages[m].first_hop; h < messages[m].first_hop + messages[m].hop_count; ++h)
        users[route.hops[h]].push_back(m);
  result.steps = replay(schedule, messages);
  for (int round = 0; round < 4; ++round) {
    std::vector<int> sharing(messages.size(), 1);
    for (const auto& [hop, on_link] : users) {
      const std::vector<int> others = overlapping(messages, on_link);
      for (size_t k = 0; k < on_link.size(); ++k)
        sharing[on_link[k]] = std::max(sharing[on_link[k]], 1 + others[k]);
    }
    bool changed = false;
    for (size_t m = 0; m < messages.size(); ++m) {
      changed = changed || sharing[m] != messages[m].sharing;
      messages[m].sharing = sharing[m];
      messages[m].duration = duration(messages[m], route);
    }
    if (!changed) break;
    result.steps = replay(schedule, messages);
  }
  for (const StepTiming& s : result.steps) result.seconds = std::max(result.seconds, s.end);
  return result;
}

}  // namespace tessera::comm
