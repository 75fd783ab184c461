// A spawn over a world whose ranks live in several processes (a transport such as MPI): each
// process runs the programs of the ranks it hosts, as coroutines in rank order, exactly as a
// simulated spawn runs all of them.
//
// What stays within one process runs as in a simulated spawn: messages between hosted ranks, and
// collectives whose members are all hosted here (they involve no other process). A send to a rank
// of another process is eager: it goes over the link at once, its tag and kind in its envelope,
// and arrives through the stream of that pair of ranks into the destination's inbox, where
// receives match it as any other message (by source, tag and kind, oldest first).
//
// Collectives that span processes are where order matters. Each runs through the world's link,
// blocking until its other processes run it too; two processes that run two such collectives in
// opposite orders would each wait for the other (or, with the same tags, take each other's
// messages). What a process could run first depends only on its own ranks' programs, and rank
// programs may legitimately reach collectives of different groups in different orders in
// different processes (a rank waiting for a message, say). So no process runs one on its own:
// once every hosted rank waits (or has finished), the process takes part in a round, in which
// every process reports (an all-gather over the link) the collectives whose hosted members have
// all arrived, what it sent and took in, whether its ranks finished or one failed, and what each
// of its ranks waits in. Every process then decides the same from the same reports:
//   - a rank that threw anywhere ends the spawn on every process (each throws RankError naming it);
//   - the n-th collective of a fibre is the same call on every process of its members; reports of
//     it that differ (another collective, dtype, shape, reduce op or root) end the spawn with an
//     Error naming both calls;
//   - a collective reported by every process of its members runs now, and all such collectives run
//     in one order (by their members' ranks, then n) numbered alike on every process: each process
//     runs its part of one total order, so the first collective not yet done always has every one
//     of its processes at it, and nothing waits in a cycle;
//   - messages sent but not yet taken in are awaited by their receiving process (a peer's eager
//     send is known to be on its way);
//   - when no collective can run, no message is on its way and some rank has not finished, no
//     rank can ever go on: a deadlock, reported on every process listing every rank's wait;
//   - when every rank of every process finished and every message arrived, the spawn ends (with an
//     Error on every process if any message went unreceived or any receive unmatched).
// A process whose ranks all wait thus waits in the round's all-gather (the transport's, which
// sleeps between polls), at most the world's timeout: a peer that died, hangs or computes for
// longer than that makes the round fail with an Error naming what every hosted rank waits in.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "spawn/gathering.hpp"
#include "tessera/errors.hpp"
#include "world/process_link.hpp"

namespace tessera::spawned {

namespace {

// Reports travel as bytes: numbers as their 8 bytes in this machine's order (the processes of a
// world run one build on one kind of machine), strings and lists with their length first.
class Writer {
 public:
  void number(uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void text(const std::string& s) {
    number(s.size());
    bytes_ += s;
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  Reader(const std::string& bytes, int process) : bytes_(bytes), process_(process) {}
  uint64_t number() {
    need(sizeof(uint64_t));
    uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + at_, sizeof(v));
    at_ += sizeof(v);
    return v;
  }
  std::string text() {
    const uint64_t n = number();
    need(n);
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }

 private:
  void need(uint64_t n) const {
    if (n > bytes_.size() - at_)
      throw Error(
          fmt::format("ts::spawn: the report of process {} in a round of the processes' agreement is "
                      "truncated ({} bytes); the processes run different builds of Tessera?",
                      process_, bytes_.size()));
  }
  const std::string& bytes_;
  int process_;
  size_t at_ = 0;
};

std::string encode(const Scheduler::Report& r) {
  Writer w;
  w.number(r.finished ? 1 : 0);
  w.number(static_cast<uint64_t>(static_cast<int64_t>(r.failed_rank)));
  w.text(r.failure);
  w.number(r.ready.size());
  for (const Scheduler::Report::Ready& g : r.ready) {
    w.number(g.fibre.size());
    for (int m : g.fibre) w.number(static_cast<uint64_t>(m));
    w.number(g.ordinal);
    w.number(g.call);
    w.number(static_cast<uint64_t>(g.rank));
    w.text(g.text);
  }
  for (const std::vector<uint64_t>* counts : {&r.sent_to, &r.taken_from}) {
    w.number(counts->size());
    for (uint64_t c : *counts) w.number(c);
  }
  w.text(r.waits);
  w.text(r.leftovers);
  return w.take();
}

Scheduler::Report decode(const std::string& bytes, int process, size_t processes) {
  Reader in(bytes, process);
  Scheduler::Report r;
  r.finished = in.number() != 0;
  r.failed_rank = static_cast<int>(static_cast<int64_t>(in.number()));
  r.failure = in.text();
  const uint64_t ready = in.number();
  for (uint64_t i = 0; i < ready; ++i) {
    Scheduler::Report::Ready g;
    const uint64_t members = in.number();
    for (uint64_t k = 0; k < members; ++k) g.fibre.push_back(static_cast<int>(in.number()));
    g.ordinal = in.number();
    g.call = in.number();
    g.rank = static_cast<int>(in.number());
    g.text = in.text();
    r.ready.push_back(std::move(g));
  }
  for (std::vector<uint64_t>* counts : {&r.sent_to, &r.taken_from}) {
    const uint64_t n = in.number();
    if (n != processes)
      throw Error(fmt::format("ts::spawn: process {} counts messages for {} process(es), this one for {}",
                              process, n, processes));
    for (uint64_t i = 0; i < n; ++i) counts->push_back(in.number());
  }
  r.waits = in.text();
  r.leftovers = in.text();
  return r;
}

// What every member's call must agree on, as one number: the collective and its agreed numbers.
uint64_t call_digest(const comm::Meeting& m) {
  uint64_t h = world::digest(m.collective, std::strlen(m.collective));
  return world::digest(m.agreed.data(), m.agreed.size() * sizeof(int64_t), h);
}

}  // namespace

void Scheduler::run_across() {
  const size_t processes = static_cast<size_t>(world_->process_count());
  sent_to_.assign(processes, 0);
  taken_from_.assign(processes, 0);
  for (int dst = 0; dst < size(); ++dst)
    if (hosts(dst))
      for (int src = 0; src < size(); ++src)
        if (!hosts(src)) streams_.push_back(std::make_unique<comm::RemoteStream>(*world_, src, dst));
  std::exception_ptr link_error;
  try {
    do run_until_all_wait();
    while (round());
  } catch (...) {
    // The link failed (a peer that did not answer, a message that does not belong): the processes
    // can no longer agree on anything. Unwind the hosted ranks, then report it.
    link_error = std::current_exception();
    aborting_ = true;
  }
  if (aborting_) run_until_all_wait();  // unwinds every waiting rank (Aborted)
  if (!link_error) {
    try {
      // Every process ends here, agreed. The messages the last round counted as on their way are
      // taken in (a failing spawn may leave some), so that none is left for a later spawn's
      // receives; then the header receives still posted are let go, and only once every process
      // has let go of its own may any start sending again (a peer's next spawn could otherwise
      // send into this one's receives).
      await_messages_sent_here(last_reports_);
      for (const std::unique_ptr<comm::RemoteStream>& stream : streams_) stream->close();
      world_->link()->allgather(std::string(1, '\0'), "ts::spawn: ending the spawn on every process");
    } catch (...) {
      link_error = std::current_exception();
    }
  }
  if (link_error) std::rethrow_exception(link_error);
  if (remote_failed_rank_ >= 0)
    throw RankError(remote_failed_rank_, std::make_exception_ptr(Error(remote_failure_)),
                    fmt::format("ts::spawn: rank {} (process {}) failed: {}", remote_failed_rank_,
                                process_of(remote_failed_rank_), remote_failure_));
  throw_failure();
  if (!agreed_error_.empty()) throw Error(agreed_error_);
}

void Scheduler::run_until_all_wait() {
  for (;;) {
    const bool arrived = !aborting_ && take_in_arrivals();
    const bool ran = run_pass();
    if (!ran && !arrived) return;
  }
}

bool Scheduler::take_in_arrivals() {
  bool any = false;
  for (const std::unique_ptr<comm::RemoteStream>& stream : streams_)
    while (std::optional<comm::RemoteStream::Message> m = stream->poll()) {
      ++taken_from_[static_cast<size_t>(process_of(stream->from()))];
      const comm::MessageSpace space =
          m->kind == comm::MessageKind::gradient ? comm::MessageSpace::gradient : comm::MessageSpace::user;
      arrive(stream->to(), {stream->from(), m->tag, space, std::move(m->data)});
      any = true;
    }
  return any;
}

Scheduler::Report Scheduler::report() const {
  Report r;
  r.finished = true;
  for (int rank = 0; rank < size(); ++rank)
    if (hosts(rank)) r.finished = r.finished && finished(rank);
  if (failure_) {
    r.failed_rank = failed_rank_;
    r.failure = "an exception that is not a std::exception";
    try {
      std::rethrow_exception(failure_);
    } catch (const std::exception& e) {
      r.failure = e.what();
    } catch (...) {
    }
  }
  if (!aborting_)
    for (const std::shared_ptr<Gathering>& g : ready_)
      r.ready.push_back({*g->fibre, g->ordinal, call_digest(*g->first), g->first_rank, g->first->describe()});
  r.sent_to = sent_to_;
  r.taken_from = taken_from_;
  r.waits = waits();
  if (r.finished) r.leftovers = leftovers();
  return r;
}

std::vector<Scheduler::Report> Scheduler::exchange(const Report& mine) {
  world::ProcessLink& link = *world_->link();
  const std::string what = fmt::format("ts::spawn: round {} of the processes' agreement", rounds_);
  const std::string bytes = encode(mine);
  std::string length(sizeof(uint64_t), '\0');
  const uint64_t n = bytes.size();
  std::memcpy(length.data(), &n, sizeof(n));
  std::vector<uint64_t> lengths;
  for (const std::string& each : link.allgather(length, what)) {
    uint64_t v = 0;
    std::memcpy(&v, each.data(), sizeof(v));
    lengths.push_back(v);
  }
  std::string padded = bytes;
  padded.resize(*std::max_element(lengths.begin(), lengths.end()), '\0');
  const std::vector<std::string> all = link.allgather(padded, what);
  std::vector<Report> reports;
  for (size_t p = 0; p < all.size(); ++p)
    reports.push_back(decode(all[p].substr(0, lengths[p]), static_cast<int>(p), all.size()));
  return reports;
}

bool Scheduler::round() {
  ++rounds_;
  std::vector<Report> reports;
  try {
    reports = exchange(report());
    last_reports_ = reports;
  } catch (const Error& e) {
    throw Error(fmt::format(
        "ts::spawn on process {}: its ranks wait for other processes, which did not all take part "
        "in the processes' agreement: {}; the ranks of process {} wait in: {}",
        world_->process_index(), e.what(), world_->process_index(),
        waits().empty() ? "nothing (every one finished)" : waits()));
  }
  const int processes = static_cast<int>(reports.size());

  // A rank that threw, on any process: the lowest such rank is named everywhere.
  int failed = -1;
  for (int p = 0; p < processes; ++p) {
    const Report& r = reports[static_cast<size_t>(p)];
    if (r.failed_rank >= 0 && (failed < 0 || r.failed_rank < failed)) {
      failed = r.failed_rank;
      if (!hosts(failed)) {
        remote_failed_rank_ = failed;
        remote_failure_ = r.failure;
      } else {
        remote_failed_rank_ = -1;
      }
    }
  }
  if (failed >= 0) {
    aborting_ = true;
    return false;
  }

  // Every process's part of each collective across processes, by (members, ordinal): sorted, so
  // that every process goes through them in one order.
  using Key = std::pair<std::vector<int>, uint64_t>;
  std::map<Key, std::vector<std::pair<int, const Report::Ready*>>> calls;
  for (int p = 0; p < processes; ++p)
    for (const Report::Ready& g : reports[static_cast<size_t>(p)].ready)
      calls[{g.fibre, g.ordinal}].emplace_back(p, &g);
  std::vector<Key> runnable;
  for (const auto& [key, parts] : calls) {
    const Report::Ready& first = *parts.front().second;
    for (const auto& [p, part] : parts)
      if (part->call != first.call) {
        agreed_error_ = fmt::format(
            "ts::spawn: collective mismatch over ranks [{}] (their collective #{}): rank {} (process {}) "
            "called {} "
            "where rank {} (process {}) called {}; every member of a group must make the same call "
            "(collective, "
            "dtype, shape, reduce op, root) at the same point",
            fmt::join(key.first, ", "), key.second, first.rank, parts.front().first, first.text, part->rank,
            p, part->text);
        aborting_ = true;
        return false;
      }
    std::set<int> spanned;
    for (int m : key.first) spanned.insert(process_of(m));
    if (parts.size() == spanned.size()) runnable.push_back(key);
  }

  bool in_flight = false;
  bool all_finished = true;
  for (int p = 0; p < processes; ++p) {
    all_finished = all_finished && reports[static_cast<size_t>(p)].finished;
    for (int q = 0; q < processes; ++q)
      in_flight = in_flight || reports[static_cast<size_t>(p)].sent_to[static_cast<size_t>(q)] >
                                   reports[static_cast<size_t>(q)].taken_from[static_cast<size_t>(p)];
  }
  if (all_finished && !in_flight) {
    std::string left;
    for (const Report& r : reports)
      if (!r.leftovers.empty()) left += (left.empty() ? "" : "; ") + r.leftovers;
    if (!left.empty()) agreed_error_ = fmt::format("ts::spawn: every program ended, but {}", left);
    return false;
  }
  if (runnable.empty() && !in_flight) {
    std::string all_waits;
    for (const Report& r : reports)
      if (!r.waits.empty()) all_waits += (all_waits.empty() ? "" : "; ") + r.waits;
    agreed_error_ =
        fmt::format("ts::spawn: deadlock: every rank that has not finished is waiting: {}", all_waits);
    aborting_ = true;
    return false;
  }

  for (const Key& key : runnable) {
    const uint64_t sequence = agreed_calls_++;
    const auto mine = std::find_if(ready_.begin(), ready_.end(), [&](const std::shared_ptr<Gathering>& g) {
      return *g->fibre == key.first && g->ordinal == key.second;
    });
    if (mine == ready_.end()) continue;  // among other processes only
    std::shared_ptr<Gathering> gathering = *mine;
    ready_.erase(mine);
    world_->number_next_call(sequence);
    run_gathering(*gathering, gathering->labels);
    retire(std::move(gathering));
  }
  await_messages_sent_here(reports);
  return true;
}

void Scheduler::await_messages_sent_here(const std::vector<Report>& reports) {
  const size_t me = static_cast<size_t>(world_->process_index());
  const auto all_here = [&] {
    for (size_t q = 0; q < reports.size(); ++q)
      if (taken_from_[q] < reports[q].sent_to[me]) return false;
    return true;
  };
  world::ProcessLink& link = *world_->link();
  if (link.poll([&] {
        take_in_arrivals();
        return all_here();
      }))
    return;
  std::string missing;
  for (size_t q = 0; q < reports.size(); ++q)
    if (taken_from_[q] < reports[q].sent_to[me])
      missing += fmt::format("{}{} of {} from process {}", missing.empty() ? "" : ", ",
                             reports[q].sent_to[me] - taken_from_[q], reports[q].sent_to[me], q);
  const std::string text = fmt::format(
      "ts::spawn on process {}: messages sent to its ranks did not arrive within the timeout of {} ms "
      "([world] "
      "timeout, TESSERA_TIMEOUT): {}",
      me, link.timeout_ms(), missing);
  link.break_link(text);
  throw Error(text);
}

}  // namespace tessera::spawned
