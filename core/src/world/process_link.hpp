// This process's link to the other processes of its world: a transport plugin (SDK 1.1), driven
// the way transport.h asks (one call at a time, init first, finalize last with nothing pending).
//
// Tags: a transport matches a receive to a send by (process, tag), so the executor's messages
// between different pairs of ranks, and messages of different kinds, need different tags. The
// tag space is cut into three regions: collectives (a call's sequence number and the pair of
// ranks), point-to-point send/recv (the pair of ranks) and control messages of the link itself.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "plugin/transport.hpp"
#include "tessera/tensor.hpp"

namespace tessera::world {

// A non-owning reference to a callable taking no arguments (it must outlive the call it is passed
// to): no allocation and one indirect call, where the link polls thousands of times a second.
template <class R>
class Callback {
 public:
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, Callback> && std::is_invocable_r_v<R, F&>)
      // NOLINTNEXTLINE(bugprone-forwarding-reference-overload): the requires clause keeps Callback out
      Callback(F&& f)  // NOLINT(google-explicit-constructor): a lambda converts at the call site
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object) -> R { return (*static_cast<std::remove_reference_t<F>*>(object))(); }) {}
  R operator()() const { return call_(object_); }

 private:
  void* object_;
  R (*call_)(void*);
};

// What a transport reported at init about its links (SDK 1.5, transport.h), validated; 0 means
// unknown (latency, bandwidth) or no limit (max_message_bytes).
struct LinkProperties {
  double latency = 0.0;           // seconds per message between processes
  double bandwidth = 0.0;         // bytes per second between processes
  int64_t max_message_bytes = 0;  // the longest chunk one isend or irecv may carry
  bool device_memory = false;     // the transport also takes chunks in device memory
  // Whether the links between processes are costed by the transport rather than the preset alone.
  bool costs_links() const { return latency > 0 || bandwidth > 0; }
};

class ProcessLink {
 public:
  class Request;

  // Initialises `transport`; throws Error naming the transport when init fails or reports a world
  // that cannot hold `ranks_per_process` ranks per process (too few tags, too many ranks), or link
  // properties that are not valid (naming the field and the value).
  ProcessLink(std::shared_ptr<const plugin::Transport> transport, int ranks_per_process, int64_t timeout_ms);
  // Frees what is pending, then finalizes the transport; a broken link (below) aborts it instead.
  ~ProcessLink();
  ProcessLink(const ProcessLink&) = delete;
  ProcessLink& operator=(const ProcessLink&) = delete;

  const std::string& transport_name() const { return name_; }
  int process_index() const { return index_; }
  int process_count() const { return count_; }
  int64_t timeout_ms() const { return timeout_ms_; }
  const LinkProperties& properties() const { return properties_; }

  // A failure on the link (a transport error, a peer that did not answer within the timeout, a
  // message that does not belong where it arrived, a send or receive abandoned while in flight)
  // breaks it for good: the processes no longer agree on which message is which. From then on
  // every call that would use the transport throws an Error naming the first failure, no send
  // buffer is released (the transport may still read it), and the link's end aborts the transport
  // (tessera_transport.abort: MPI_Abort ends the whole job) instead of finalizing it, which could
  // wait forever for a stalled peer. `reason` is kept from the first call only.
  void break_link(const std::string& reason);
  bool broken() const { return broken_.load(std::memory_order_acquire); }
  // Throws the broken link's Error when broken; `call` names what was about to run.
  void require_intact(const char* call) const {
    if (broken()) refuse_broken(call);
  }

  // Tags (see above). `from` and `to` are the ranks' positions within their processes.
  int64_t collective_tag(uint64_t sequence, int from, int to) const;
  int64_t point_to_point_tag(int from, int to) const;

  // Posts a send of `chunk` (a contiguous CPU tensor, kept alive by the request) to `process`. Every
  // post (these, the ranges, staged sends, scratch receives) refuses a chunk longer than the
  // transport's max_message_bytes with an Error naming both lengths, which breaks the link (the
  // peer's side of the message goes unmatched).
  std::shared_ptr<Request> isend(const Tensor& chunk, int process, int64_t tag);
  // Posts a receive into `chunk` (contiguous, CPU; written when the request completes).
  std::shared_ptr<Request> irecv(const Tensor& chunk, int process, int64_t tag);
  // The same for `count` elements of the contiguous CPU buffer `buffer` from element `offset`,
  // returning the request by value (no allocation: a collective posts these on every call). The
  // request keeps `buffer` alive.
  Request send_range(const std::shared_ptr<TensorImpl>& buffer, int64_t offset, int64_t count, int process,
                     int64_t tag);
  Request receive_range(const std::shared_ptr<TensorImpl>& buffer, int64_t offset, int64_t count, int process,
                        int64_t tag);
  // Sends of at most kStagedBytes go from a copy the link owns, as an eager MPI send is buffered:
  // the caller may write its buffer at once and never waits for the send. The link frees each
  // once it has completed (looked at once kReapAfter are posted; at most kMostStaged are pending)
  // and waits for the rest before it finalizes the transport. A staged send that fails is an Error
  // of a later call, naming `call` (the collective's sequence number), the process and the tag.
  // The message is `header` (at most kMostHeaderBytes, e.g. comm/envelope.hpp's envelope) followed
  // by the chunk's bytes (count may be 0: a header of its own).
  static constexpr size_t kStagedBytes = 4096;
  static constexpr size_t kMostHeaderBytes = 256;
  static constexpr size_t kReapAfter = 16;
  static constexpr size_t kMostStaged = 64;
  void send_staged(const void* header, size_t header_bytes, const TensorImpl& buffer, int64_t offset,
                   int64_t count, int process, int64_t tag, uint64_t call);

  // True when the request has completed; throws Error (naming what `what()` says: it is called only
  // then, so polling costs no formatting) when it failed.
  bool test(Request& request, Callback<std::string> what);

  // Calls `done` until it returns true (polling again at once at first, for latency, then yielding,
  // then sleeping longer so that a long wait does not burn a core); false when the world's timeout
  // passed first. The one way this process waits on others.
  bool poll(Callback<bool> done) const;

  // A receive into a 1-d scratch buffer of at least `count` elements with `like`'s dtype and
  // backend, for a chunk that is reduced on arrival. The scratch is the one the last such receive
  // ended with (end_scratch) when it fits, so that a collective of small messages does not
  // allocate one per call, else a new one. Posting and ending take the link's lock once each: a
  // small collective does both on every call.
  struct ScratchReceive;  // below, after Request
  ScratchReceive receive_scratch(const TensorImpl& like, int64_t count, int process, int64_t tag);
  // Frees the completed receive's request, then keeps a small scratch for the next one.
  void end_scratch(ScratchReceive&& receive);

  // Every process's `bytes` in process order (a blocking all-gather of a few kilobytes at most), within
  // the timeout; `what` names the call in errors.
  std::vector<std::string> allgather(const std::string& bytes, const std::string& what);

 private:
  friend class Request;
  void free_locked(void* handle);
  // Breaks the link, then throws an Error naming the transport, the call and the message.
  [[noreturn]] void fail(const std::string& call, const std::string& message);
  [[noreturn]] void refuse_broken(const char* call) const;
  // ~ProcessLink of a broken link: abort the transport, keep every buffer it may still read.
  void abort_transport() noexcept;
  std::vector<std::string> allgather_by_messages(const std::string& bytes, const std::string& what);
  Request post(bool send, const DLTensor& chunk, std::shared_ptr<const void> keep, int process, int64_t tag);
  void* post_locked(bool send, const DLTensor& chunk, int process, int64_t tag);

  // A staged send (send_staged) and the copy it sends from.
  struct StagedSend {
    void* handle;
    std::unique_ptr<std::byte[]> block;  // kMostHeaderBytes + kStagedBytes long
    size_t bytes;
    int process;
    int64_t tag;
    uint64_t call;
  };
  // Frees the staged sends that have completed, oldest first, up to the first still pending.
  void reap_staged_locked();
  // Whether `sent` has completed; when it failed, frees it and throws Error naming it (the caller
  // takes it off staged_).
  bool staged_done_locked(StagedSend& sent);
  // The same for the oldest staged send, which a failure takes off the list.
  bool oldest_staged_done_locked();
  void settle_staged();  // before finalize: wait (at most the timeout), then free them all

  std::shared_ptr<const plugin::Transport> transport_;
  std::string name_;
  int index_ = 0;
  int count_ = 1;
  int64_t max_tag_ = 0;
  LinkProperties properties_;
  uint64_t collective_calls_ = 1;  // calls whose collective tags differ before they repeat
  int ranks_per_process_ = 1;
  int64_t timeout_ms_;
  uint64_t control_sequence_ = 0;
  std::mutex mutex_;  // transport.h: one call at a time; also guards spare_scratch_ and the staged sends
  std::shared_ptr<TensorImpl> spare_scratch_;
  std::vector<StagedSend> staged_;                          // oldest first
  std::vector<std::unique_ptr<std::byte[]>> spare_blocks_;  // of staged sends that completed
  std::atomic<bool> broken_{false};
  std::string broken_reason_;  // the first failure, under broken_mutex_
  mutable std::mutex broken_mutex_;
  // Buffers of requests released before they completed: the transport may still read or write
  // them, so they live as long as the link.
  std::vector<std::shared_ptr<const void>> held_in_flight_;
};

// A pending send or receive, or none (default-constructed, or moved from); freed (cancelled if
// still pending) when its owner lets go.
class ProcessLink::Request {
 public:
  Request() = default;
  Request(ProcessLink& link, void* handle, std::shared_ptr<const void> keep, bool send)
      : link_(&link), handle_(handle), keep_(std::move(keep)), send_(send) {}
  // Releasing a request not known to have completed tests it once; a send still pending is given
  // the world's timeout to complete (a live peer takes it); a receive still pending (cancelled), or
  // a send still pending then, breaks the link (an exception unwinding a collective: the peer's
  // messages no longer line up with this process's calls).
  ~Request() { release(); }
  Request(Request&& other) noexcept { *this = std::move(other); }
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  bool done() const { return done_; }
  // Frees a receive that its owner knows no message will come for (every process agreed that all
  // messages sent have arrived), cancelling it if still pending, without breaking the link.
  void cancel_receive();

 private:
  friend class ProcessLink;
  void release();
  void release_locked();  // with the link's lock held
  void abandon_locked();  // release_locked of a request that has not completed

  ProcessLink* link_ = nullptr;  // null when this holds no request
  void* handle_ = nullptr;
  std::shared_ptr<const void> keep_;  // keeps the bytes alive while the transport owns them
  bool done_ = false;
  bool send_ = false;
};

struct ProcessLink::ScratchReceive {
  std::shared_ptr<TensorImpl> scratch;  // the caller's until end_scratch
  Request request;                      // declared after it: freed (cancelled if pending) first
};

// A 64-bit digest (FNV-1a) of bytes, for comparing values across processes without sending them.
uint64_t digest(const void* data, size_t bytes, uint64_t seed = 14695981039346656037ull);
inline uint64_t digest(const std::string& text) { return digest(text.data(), text.size()); }

}  // namespace tessera::world
