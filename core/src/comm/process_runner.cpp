#include "comm/process_runner.hpp"

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory_resource>
#include <optional>
#include <unordered_map>

#include "comm/envelope.hpp"
#include "comm/prepared_call.hpp"
#include "comm/schedule_runner.hpp"
#include "tessera/errors.hpp"
#include "world/process_link.hpp"
#include "world/world.hpp"

namespace tessera::comm {
namespace {

using Request = world::ProcessLink::Request;

// A receive from another process, posted when its rank reached the step. Every message starts
// with its envelope (comm/envelope.hpp). A small one (a staged send: at most kStagedBytes of
// payload) is envelope and payload in one message, landing in the link's scratch; a larger one is
// the envelope, then the payload as a message of its own (the sender sends it from its buffer, with
// no copy), landing in the chunk itself or, when it is reduced on arrival, in a scratch of its own.
struct Landing {
  world::ProcessLink::ScratchReceive framed;  // the envelope, and a small message's payload after it
  std::shared_ptr<TensorImpl> scratch;        // a large reduced payload's place (declared before its request)
  world::ProcessLink::Request payload;        // a large message's payload
  bool large = false;
  bool opened = false;  // the envelope was checked
};

// A send to another process, still reading its rank's buffer until the request completes.
struct Outgoing {
  int rank;
  size_t step;  // its index in the rank's program, for messages
  tessera_chunk chunk;
  Request request;
};

bool overlaps(const tessera_chunk& a, const tessera_chunk& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.count && b.offset < a.offset + a.count;
}

class ProcessRunner {
 public:
  // The runner's own bookkeeping comes from `memory` (a small buffer on the caller's stack for the
  // usual few ranks): a collective of small messages must not pay for heap allocations.
  ProcessRunner(const Schedule& schedule, TensorModel& model, const ExecutionPlace& place,
                const PreparedCall& prepared, std::pmr::memory_resource* memory)
      : schedule_(schedule),
        model_(model),
        link_(*place.world->link()),
        members_(*place.members),
        call_(place.call),
        p_(schedule.group_size()),
        where_(prepared.members),
        ordinals_(prepared.ordinals),
        landings_(memory),
        next_(memory),
        outgoing_(memory) {
    landings_.resize(static_cast<size_t>(p_));
    next_.assign(static_cast<size_t>(p_), 0);
    outgoing_.reserve(static_cast<size_t>(p_));
    call_envelope_ = prepared.envelope;
    call_envelope_.call = call_;
    model_.remote_reading_ = {[](void* runner, int rank, const tessera_chunk& target) {
                                return static_cast<ProcessRunner*>(runner)->still_sending(rank, target);
                              },
                              this};
  }
  ~ProcessRunner() { model_.remote_reading_ = {}; }

  void run() {
    for (;;) {
      if (round()) continue;
      if (!awaiting_any()) break;
      wait_for_any_landing();
    }
    require_finished(
        schedule_, next_, mailbox_, [this](int g) { return hosted(g); },
        [this](int g) { return members_[static_cast<size_t>(g)]; });
    finish_sends();
  }

 private:
  bool hosted(int g) const { return where_[static_cast<size_t>(g)].hosted; }
  int process_of(int g) const { return where_[static_cast<size_t>(g)].process; }
  std::optional<Landing>& landing(int g) { return landings_[static_cast<size_t>(g)]; }
  int64_t tag(int from, int to) const {
    return link_.collective_tag(call_, where_[static_cast<size_t>(from)].position,
                                where_[static_cast<size_t>(to)].position);
  }
  std::string peer_text(int g) const {
    return fmt::format("rank {} (process {})", members_[static_cast<size_t>(g)], process_of(g));
  }
  std::string step_text(int g) const {
    return fmt::format("{} of collective call #{}", schedule_.describe_step(g, next_[static_cast<size_t>(g)]),
                       call_);
  }

  // One turn of every hosted rank; true when some step ran.
  bool round() {
    bool progress = false;
    for (int g = 0; g < p_; ++g) {
      if (!hosted(g)) continue;
      const std::vector<Step>& steps = schedule_.ranks[static_cast<size_t>(g)].steps;
      for (size_t& i = next_[static_cast<size_t>(g)]; i < steps.size(); ++i) {
        if (!run_step(g, steps[i])) break;
        progress = true;
      }
    }
    return progress;
  }

  // Runs one step of hosted group rank g; false when it must wait for a message.
  bool run_step(int g, const Step& step) {
    const bool remote_peer = step.peer >= 0 && !hosted(step.peer);
    switch (step.kind) {
      case StepKind::Send:
        if (remote_peer)
          send_remote(g, step);
        else
          queue(g, step.peer).push_back(model_.capture(g, step.chunk));
        return true;
      case StepKind::Recv:
      case StepKind::RecvReduce:
        return remote_peer ? receive_remote(g, step) : receive_local(g, step);
      case StepKind::Copy:
        model_.copy(g, step.chunk, step.source);
        return true;
      case StepKind::Reduce:
        model_.reduce(g, step.chunk, step.source);
        return true;
    }
    return true;
  }

  // The envelope of the message that hosted group rank g's current step sends to or receives from
  // group rank `peer`, of `count` elements.
  Envelope envelope(int g, int peer, bool sending, int64_t count) const {
    Envelope e = call_envelope_;
    e.sender = members_[static_cast<size_t>(sending ? g : peer)];
    e.receiver = members_[static_cast<size_t>(sending ? peer : g)];
    e.ordinal = ordinals_[static_cast<size_t>(g)][next_[static_cast<size_t>(g)]];
    e.count = count;
    return e;
  }

  // A small message goes from the link's copy (staged: nothing to wait for or guard), a larger one
  // from the buffer itself, which later writes then keep away from (before_write) until it is sent;
  // its envelope goes ahead of it, staged.
  void send_remote(int g, const Step& step) {
    const std::shared_ptr<TensorImpl>& buffer = model_.buffer(g, step.chunk.buffer);
    const int process = process_of(step.peer);
    const int64_t message_tag = tag(g, step.peer);
    // The chunk lies inside its buffer (the schedule was verified): its byte count does not overflow.
    const size_t bytes = static_cast<size_t>(step.chunk.count) * itemsize(buffer->dtype());
    std::array<std::byte, kEnvelopeBytes> header{};
    Envelope e = envelope(g, step.peer, true, step.chunk.count);
    seal(e, buffer->bytes_at(step.chunk.offset), bytes);
    std::memcpy(header.data(), &e, sizeof(e));
    const bool small = bytes <= world::ProcessLink::kStagedBytes;
    link_.send_staged(header.data(), header.size(), *buffer, step.chunk.offset, small ? step.chunk.count : 0,
                      process, message_tag, call_);
    if (small) return;
    outgoing_.push_back(
        {g, next_[static_cast<size_t>(g)], step.chunk,
         link_.send_range(buffer, step.chunk.offset, step.chunk.count, process, message_tag)});
  }

  bool receive_local(int g, const Step& step) {
    auto& incoming = queue(step.peer, g);
    if (incoming.empty()) return false;
    if (incoming.front().count != step.chunk.count)
      throw Error(fmt::format("{} expects {} elements, but the message from rank {} has {}",
                              schedule_.describe_step(g, next_[static_cast<size_t>(g)]), step.chunk.count,
                              members_[static_cast<size_t>(step.peer)], incoming.front().count));
    model_.deliver(g, step.chunk, incoming.front(), step.kind == StepKind::RecvReduce);
    incoming.pop_front();
    return true;
  }

  bool receive_remote(int g, const Step& step) {
    std::optional<Landing>& landing = this->landing(g);
    if (!landing) post_receive(g, step, landing);
    if (!landed(g, step, *landing)) return false;
    if (landing->large) {
      if (landing->scratch != nullptr) {
        open_payload(g, step, *landing, landing->scratch->bytes_at(0));
        model_.deliver_landed(g, step.chunk, *landing->scratch, true);
      } else {
        open_payload(g, step, *landing, model_.buffer(g, step.chunk.buffer)->bytes_at(step.chunk.offset));
      }
    } else {
      const TensorImpl& framed = *landing->framed.scratch;
      open_payload(g, step, *landing, framed.bytes_at(envelope_elements(framed)));
      model_.deliver_landed(g, step.chunk, framed, step.kind == StepKind::RecvReduce,
                            envelope_elements(framed));
    }
    link_.end_scratch(std::move(landing->framed));
    landing.reset();
    return true;
  }

  static int64_t envelope_elements(const TensorImpl& like) {
    return static_cast<int64_t>(kEnvelopeBytes / itemsize(like.dtype()));
  }

  void post_receive(int g, const Step& step, std::optional<Landing>& landing) {
    const int process = process_of(step.peer);
    const int64_t message_tag = tag(step.peer, g);
    const TensorImpl& like = *model_.buffer(g, TESSERA_BUFFER_INPUT);
    const int64_t header = envelope_elements(like);
    landing.emplace();
    // The sender's rule, applied to the same count and dtype: both sides agree on the framing.
    landing->large =
        static_cast<size_t>(step.chunk.count) * itemsize(like.dtype()) > world::ProcessLink::kStagedBytes;
    if (!landing->large) {
      landing->framed = link_.receive_scratch(like, header + step.chunk.count, process, message_tag);
      return;
    }
    landing->framed = link_.receive_scratch(like, header, process, message_tag);
    if (step.kind == StepKind::RecvReduce) {
      landing->scratch = TensorImpl::allocate({step.chunk.count}, like.dtype(), like.backend_ptr());
      landing->payload = link_.receive_range(landing->scratch, 0, step.chunk.count, process, message_tag);
    } else {
      model_.before_write(g, step.chunk);
      landing->payload = link_.receive_range(model_.buffer(g, step.chunk.buffer), step.chunk.offset,
                                             step.chunk.count, process, message_tag);
    }
  }

  // Whether the whole message has arrived; its envelope is checked as soon as it is there (before a
  // large payload: a message of another call is reported as that, not as a length mismatch).
  bool landed(int g, const Step& step, Landing& landing) {
    const ReceiveStep at{this, g, &step};
    if (!link_.test(landing.framed.request, [&at] { return at.text(); })) return false;
    if (!landing.opened) {
      open_envelope(g, step, landing);
      landing.opened = true;
    }
    return !landing.large || link_.test(landing.payload, [&at] { return at.text(); });
  }

  Envelope received_envelope(const Landing& landing) const {
    Envelope got;
    std::memcpy(&got, landing.framed.scratch->bytes_at(0), sizeof(got));
    return got;
  }

  void open_envelope(int g, const Step& step, const Landing& landing) {
    reject_if(g, step,
              envelope_problem(received_envelope(landing), envelope(g, step.peer, false, step.chunk.count)));
  }

  void open_payload(int g, const Step& step, const Landing& landing, const std::byte* payload) {
    if (call_envelope_.has_checksum == 0) return;
    const size_t bytes =
        static_cast<size_t>(step.chunk.count) * itemsize(model_.buffer(g, TESSERA_BUFFER_INPUT)->dtype());
    reject_if(g, step, payload_problem(received_envelope(landing), payload, bytes));
  }

  // A message that does not belong where it arrived: the processes are out of step for good.
  void reject_if(int g, const Step& step, const std::string& problem) {
    if (problem.empty()) return;
    const std::string text = fmt::format("{}: {}", receive_text(g, step), problem);
    link_.break_link(text);
    throw Error(text);
  }

  std::string send_text(const Outgoing& sent) const {
    const Step& step = schedule_.ranks[static_cast<size_t>(sent.rank)].steps[sent.step];
    return fmt::format("{} of collective call #{}: send to {}", schedule_.describe_step(sent.rank, sent.step),
                       call_, peer_text(step.peer));
  }
  bool test_send(Outgoing& sent) {
    return link_.test(sent.request, [&] { return send_text(sent); });
  }

  std::string receive_text(int g, const Step& step) const {
    return fmt::format("{}: receive from {}", step_text(g), peer_text(step.peer));
  }
  struct ReceiveStep {
    const ProcessRunner* runner;
    int g;
    const Step* step;
    std::string text() const { return runner->receive_text(g, *step); }
  };

  bool awaiting_any() const {
    for (const std::optional<Landing>& landing : landings_)
      if (landing) return true;
    return false;
  }

  // Nothing here can move: poll every posted receive until one lands, for at most the timeout.
  void wait_for_any_landing() {
    const bool any = link_.poll([&] {
      for (int g = 0; g < p_; ++g) {
        std::optional<Landing>& landing = this->landing(g);
        if (landing &&
            landed(g, schedule_.ranks[static_cast<size_t>(g)].steps[next_[static_cast<size_t>(g)]], *landing))
          return true;
      }
      for (auto& sent : outgoing_) test_send(sent);  // keeps the transport moving
      return false;
    });
    if (!any) {
      const std::string text = timeout_text();
      link_.break_link(text);
      throw Error(text);
    }
  }

  std::string timeout_text() const {
    std::string waiting;
    for (int g = 0; g < p_; ++g) {
      if (!landings_[static_cast<size_t>(g)]) continue;
      const Step& step = schedule_.ranks[static_cast<size_t>(g)].steps[next_[static_cast<size_t>(g)]];
      waiting += fmt::format("\n  {} waits for {}", step_text(g), peer_text(step.peer));
    }
    return fmt::format(
        "no message arrived from another process within the timeout of {} ms ([world] timeout, "
        "TESSERA_TIMEOUT); has a peer exited or skipped a collective?{}",
        link_.timeout_ms(), waiting);
  }

  bool still_sending(int rank, const tessera_chunk& target) {
    for (auto& sent : outgoing_)
      if (sent.rank == rank && overlaps(sent.chunk, target) && !test_send(sent)) return true;
    return false;
  }

  // Sends still in flight must complete before their buffers go: the peer is receiving them.
  void finish_sends() {
    for (auto& sent : outgoing_)
      if (!link_.poll([&] { return test_send(sent); })) {
        const std::string text = fmt::format(
            "{}: the peer did not take the message within the timeout of {} ms ([world] timeout, "
            "TESSERA_TIMEOUT)",
            send_text(sent), link_.timeout_ms());
        link_.break_link(text);
        throw Error(text);
      }
  }

  std::deque<TensorModel::Payload>& queue(int from, int to) { return mailbox_[int64_t{from} * p_ + to]; }

  const Schedule& schedule_;
  TensorModel& model_;
  world::ProcessLink& link_;
  const std::vector<int>& members_;
  uint64_t call_;
  int p_;
  // Each group rank's process and position in it, and each remote message's ordinal: the call's
  // preparation (prepared_call.hpp).
  const std::vector<PreparedCall::Member>& where_;
  const std::vector<std::vector<uint32_t>>& ordinals_;
  std::pmr::vector<std::optional<Landing>> landings_;  // each group rank's receive from another process
  std::pmr::vector<size_t> next_;                      // schedule_runner.hpp's require_finished reads it
  std::pmr::vector<Outgoing> outgoing_;
  Envelope call_envelope_;  // the fields every envelope of this call shares
  std::unordered_map<int64_t, std::deque<TensorModel::Payload>> mailbox_;
};

}  // namespace

void run_across_processes(const Schedule& schedule, TensorModel& model, const ExecutionPlace& place) {
  std::array<std::byte, 4096> arena;  // plenty for the bookkeeping of a few dozen ranks
  std::pmr::monotonic_buffer_resource memory(arena.data(), arena.size());
  const std::shared_ptr<const PreparedCall> prepared =
      prepared_call(*place.world, place.cached_schedule, schedule, *place.members, place.fingerprint);
  ProcessRunner(schedule, model, place, *prepared, &memory).run();
}

}  // namespace tessera::comm
