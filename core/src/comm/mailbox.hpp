// Point-to-point messages between simulated ranks: sends are buffered per (source, destination,
// tag); a receive takes the oldest one. Each world has its own mailbox (world/world.hpp); the free
// functions use the calling thread's world.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <vector>
#include <map>
#include <mutex>
#include <tuple>

#include "tessera/tensor.hpp"

namespace tessera::comm {

class Mailbox {
 public:
  void post(int from, int to, int tag, Tensor data);
  // The oldest message from `from` to `to` with `tag`; throws naming both ranks and the tag when
  // there is none.
  Tensor take(int from, int to, int tag);
  // Throws (and forgets them) when messages are waiting that nobody received; `where` names the
  // call that noticed.
  void require_empty(const char* where);

  // Sends to ranks of other processes still in flight (their requests keep the bytes alive);
  // completed ones are dropped whenever a new one is added.
  void hold(std::shared_ptr<void> request, std::function<bool(void*)> done);

  // The sequence number of the next message from rank `from` to rank `to` over the transport, on
  // the side that sends (`sending`) or receives: both count the same messages (envelope.hpp).
  uint64_t next_remote(int from, int to, bool sending);

 private:
  std::vector<std::pair<std::shared_ptr<void>, std::function<bool(void*)>>> remote_sends_;
  std::mutex mutex_;
  std::map<std::tuple<int, int, int>, std::deque<Tensor>> messages_;  // (from, to, tag)
  std::map<std::tuple<int, int, bool>, uint64_t> remote_sequence_;
  // Set under the lock with messages_: every collective asks whether any wait, and an empty
  // mailbox (the usual answer) is told without taking the lock.
  std::atomic<bool> holds_messages_{false};
};

// The calling thread's world's mailbox.
void post(int from, int to, int tag, Tensor data);
Tensor take(int from, int to, int tag);
// Point-to-point with a rank of another process (a distributed world): the message goes over the
// transport; a receive waits for it, at most the world's timeout, into a tensor shaped like `like`.
void post_remote(int from, int to, Tensor data);
Tensor take_remote(int from, int to, const Tensor& like);
void require_no_pending_messages(const char* where);

// Throws naming `op`, both ranks and the world when `to` is neither a rank of a world of `world` ranks
// nor -1 (no send).
void require_in_world(const char* op, int from, int64_t to, int world);

}  // namespace tessera::comm
