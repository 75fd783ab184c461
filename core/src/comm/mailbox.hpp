// Point-to-point messages between simulated ranks: sends are buffered per (source, destination,
// tag); a receive takes the oldest one. Each world has its own mailbox (world/world.hpp); the free
// functions use the calling thread's world.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "comm/envelope.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/tensor.hpp"
#include "world/process_link.hpp"

namespace tessera::world {
class WorldState;
}

namespace tessera::comm {

class Mailbox {
 public:
  void post(int from, int to, int tag, Tensor data);
  // The oldest message from `from` to `to` with `tag`; throws naming both ranks and the tag when
  // there is none.
  Tensor take(int from, int to, int tag);
  // The same, or nothing when none waits.
  std::optional<Tensor> try_take(int from, int to, int tag);
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

// `w`'s mailbox (its slot, world_slots.hpp), made on first use.
Mailbox& mailbox_of(world::WorldState& w);

// The calling thread's world's mailbox.
void post(int from, int to, int tag, Tensor data);
Tensor take(int from, int to, int tag);
// Point-to-point with a rank of another process (a distributed world `w`): the message goes over
// the transport, its tag and kind (a user's message or a gradient) in its envelope, so that the
// receiver matches by tag and tells a message that does not belong where it arrived. `data` is
// contiguous; the send is eager (the mailbox holds it until the transport has taken it).
void post_remote(world::WorldState& w, int from, int to, int tag, const Tensor& data,
                 MessageKind kind = MessageKind::point_to_point);
// A receive (of the calling thread's distributed world) of the oldest message from `from` with
// `tag`, waiting at most the world's timeout, into a tensor shaped like `like`. Messages from
// `from` with other tags that arrive first are kept in the mailbox for the receives that ask for
// them.
Tensor take_remote(int from, int to, int tag, const Tensor& like);

// One remote rank's messages to one hosted rank, received as they come, whatever their tag (the
// receiving end of a ts::spawn across processes, which matches them to receives itself). A header
// receive is always posted; polling never blocks.
class RemoteStream {
 public:
  // A message that arrived whole: its tag, kind and payload (a plain CPU tensor of its own).
  struct Message {
    int tag = 0;
    MessageKind kind = MessageKind::point_to_point;
    Tensor data;
  };
  RemoteStream(world::WorldState& w, int from, int to);
  // The next whole message, when one has arrived. Throws an Error, breaking the link, when what
  // arrived is not the next message of this pair (its envelope or payload checks fail).
  std::optional<Message> poll();
  int from() const { return from_; }
  int to() const { return to_; }
  // At the spawn's end, once every process agreed that every message sent has arrived: lets go
  // of the header receive still posted (no message will come for it).
  void close();

  // What goes ahead of every point-to-point message between processes: its envelope, and the
  // tensor's shape, so that the receiver can name a shape or dtype that differs from the receiving
  // tensor's exactly as a receive between hosted ranks does.
  struct Header {
    Envelope envelope;
    int64_t ndim = 0;
    std::array<int64_t, kMaxDims> sizes{};
  };

 private:
  void post_header();
  world::WorldState* world_;
  int from_, to_;
  Tensor header_bytes_;
  std::shared_ptr<world::ProcessLink::Request> header_request_, payload_request_;
  Header header_;
  Tensor payload_;
};
void require_no_pending_messages(const char* where);

// Throws naming `op`, both ranks and the world when `to` is neither a rank of a world of `world` ranks
// nor -1 (no send).
void require_in_world(const char* op, int from, int64_t to, int world);

}  // namespace tessera::comm
