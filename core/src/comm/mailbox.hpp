// Point-to-point messages between simulated ranks: sends are buffered per (source, destination)
// pair; a receive takes the oldest one. Each world has its own mailbox (world/world.hpp); the free
// functions use the calling thread's world.
#pragma once

#include <deque>
#include <map>
#include <mutex>

#include "tessera/tensor.hpp"

namespace tessera::comm {

class Mailbox {
 public:
  void post(int from, int to, Tensor data);
  // The oldest message from `from` to `to`; throws naming both ranks when there is none.
  Tensor take(int from, int to);
  // Throws (and forgets them) when messages are waiting that nobody received; `where` names the
  // call that noticed.
  void require_empty(const char* where);

 private:
  std::mutex mutex_;
  std::map<std::pair<int, int>, std::deque<Tensor>> messages_;
};

// The calling thread's world's mailbox.
void post(int from, int to, Tensor data);
Tensor take(int from, int to);
void require_no_pending_messages(const char* where);

// Throws naming `op`, both ranks and the world when `to` is neither a rank of a world of `world` ranks
// nor -1 (no send).
void require_in_world(const char* op, int from, int64_t to, int world);

}  // namespace tessera::comm
