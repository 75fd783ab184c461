#include "comm/mailbox.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "comm/envelope.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "world/process_link.hpp"
#include "world/world.hpp"

namespace tessera::comm {
namespace {

// Tag 0 (the default) goes unsaid in messages.
std::string tag_text(int tag) { return tag == 0 ? std::string() : fmt::format(" with tag {}", tag); }

}  // namespace

void Mailbox::post(int from, int to, int tag, Tensor data) {
  std::lock_guard lock(mutex_);
  messages_[{from, to, tag}].push_back(std::move(data));
  holds_messages_.store(true, std::memory_order_release);
}

Tensor Mailbox::take(int from, int to, int tag) {
  std::lock_guard lock(mutex_);
  auto it = messages_.find({from, to, tag});
  if (it == messages_.end() || it->second.empty())
    throw Error(fmt::format("recv on rank {} from rank {}{}: no matching send (rank {} sent nothing to rank {}{} that is "
                            "still unreceived)",
                            to, from, tag_text(tag), from, to, tag_text(tag)));
  Tensor data = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) messages_.erase(it);
  holds_messages_.store(!messages_.empty(), std::memory_order_release);
  return data;
}

void Mailbox::require_empty(const char* where) {
  if (!holds_messages_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  if (messages_.empty()) return;
  std::string pending;
  for (const auto& [key, queue] : messages_)
    pending += fmt::format("{}{} message(s) from rank {} to rank {}{}", pending.empty() ? "" : ", ", queue.size(),
                           std::get<0>(key), std::get<1>(key), tag_text(std::get<2>(key)));
  messages_.clear();
  holds_messages_.store(false, std::memory_order_release);
  throw Error(fmt::format("{}: unmatched send(s): {} never received", where, pending));
}

void Mailbox::hold(std::shared_ptr<void> request, std::function<bool(void*)> done) {
  std::lock_guard lock(mutex_);
  std::erase_if(remote_sends_, [](const auto& sent) { return sent.second(sent.first.get()); });
  remote_sends_.emplace_back(std::move(request), std::move(done));
}

uint64_t Mailbox::next_remote(int from, int to, bool sending) {
  std::lock_guard lock(mutex_);
  return remote_sequence_[{from, to, sending}]++;
}

namespace {

// What goes ahead of a point-to-point message between processes: its envelope, and the tensor's
// shape, so that the receiver can name a shape or dtype that differs from the receiving tensor's
// exactly as a simulated recv does.
struct PointToPointHeader {
  Envelope envelope;
  int64_t ndim = 0;
  std::array<int64_t, kMaxDims> sizes{};
};

Envelope point_to_point_envelope(const world::WorldState& w, int from, int to, const Tensor& like, uint64_t sequence) {
  Envelope e;
  e.kind = MessageKind::point_to_point;
  e.dtype = static_cast<uint8_t>(like.dtype());
  e.call = sequence;
  e.fingerprint = bytes_digest(like.sizes().data(), like.sizes().size() * sizeof(int64_t));
  e.sender = from;
  e.receiver = to;
  e.count = like.numel();
  e.has_checksum = w.check_collectives() ? 1 : 0;
  return e;
}

// Waits for `request` (at most the world's timeout); a timeout breaks the link.
void await(world::ProcessLink& link, world::ProcessLink::Request& request, const std::string& what, int from) {
  if (link.poll([&] { return link.test(request, [&] { return what; }); })) return;
  const std::string text =
      fmt::format("{}: no message within the timeout of {} ms ([world] timeout, TESSERA_TIMEOUT); did rank {} send one?",
                  what, link.timeout_ms(), from);
  link.break_link(text);
  throw Error(text);
}

[[noreturn]] void reject(world::ProcessLink& link, const std::string& text) {
  link.break_link(text);
  throw Error(text);
}

}  // namespace

void post_remote(int from, int to, Tensor data) {
  world::WorldState& w = world::current();
  world::ProcessLink& link = *w.link();
  const int64_t tag = link.point_to_point_tag(w.position(from), w.position(to));
  PointToPointHeader header;
  header.envelope = point_to_point_envelope(w, from, to, data, w.mailbox().next_remote(from, to, true));
  seal(header.envelope, data.impl()->bytes_at(), static_cast<size_t>(data.numel()) * itemsize(data.dtype()));
  header.ndim = data.dim();
  std::copy(data.sizes().begin(), data.sizes().end(), header.sizes.begin());
  link.send_staged(&header, sizeof(header), *data.impl(), 0, 0, w.process_of(to), tag, header.envelope.call);
  auto request = link.isend(data, w.process_of(to), tag);
  const std::string what = fmt::format("send from rank {} to rank {} (process {})", from, to, w.process_of(to));
  w.mailbox().hold(request, [&link, what](void* r) {
    return link.test(*static_cast<world::ProcessLink::Request*>(r), [&] { return what; });
  });
}

Tensor take_remote(int from, int to, const Tensor& like) {
  world::WorldState& w = world::current();
  world::ProcessLink& link = *w.link();
  const int64_t tag = link.point_to_point_tag(w.position(from), w.position(to));
  const std::string what = fmt::format("recv on rank {} from rank {} (process {})", to, from, w.process_of(from));
  // The header first: a message that does not fit the receiving tensor is named before its bytes land.
  static_assert(sizeof(PointToPointHeader) % sizeof(int64_t) == 0);
  // A plain tensor (a factory would make a local one under LocalMode), on the receiving shard's backend.
  const Tensor header_bytes(TensorImpl::allocate({static_cast<int64_t>(sizeof(PointToPointHeader) / sizeof(int64_t))},
                                                 kInt64, like.impl()->backend_ptr()));
  const auto header_request = link.irecv(header_bytes, w.process_of(from), tag);
  await(link, *header_request, what, from);
  PointToPointHeader header;
  std::memcpy(&header, header_bytes.impl()->bytes_at(), sizeof(header));
  const Envelope& got = header.envelope;
  const Envelope expected = point_to_point_envelope(w, from, to, like, w.mailbox().next_remote(from, to, false));
  if (got.kind == MessageKind::point_to_point && got.dtype != expected.dtype && got.dtype < kNumDTypes)
    reject(link, fmt::format("{}: the message holds {} but the receiving tensor is {}", what,
                             dtype_name(static_cast<DType>(got.dtype)), dtype_name(like.dtype())));
  if (got.kind == MessageKind::point_to_point && header.ndim >= 0 && header.ndim <= kMaxDims) {
    const Shape sent(header.sizes.begin(), header.sizes.begin() + header.ndim);
    if (sent != like.sizes())
      reject(link, fmt::format("{}: the message has shape {} but the receiving tensor has {}", what, shape_text(sent),
                               shape_text(like.sizes())));
  }
  if (std::string problem = envelope_problem(got, expected); !problem.empty())
    reject(link, fmt::format("{}: {}", what, problem));
  Tensor message = empty_like(like.contiguous());
  const auto request = link.irecv(message, w.process_of(from), tag);
  await(link, *request, what, from);
  if (std::string problem =
          payload_problem(got, message.impl()->bytes_at(), static_cast<size_t>(message.numel()) * itemsize(message.dtype()));
      !problem.empty())
    reject(link, fmt::format("{}: {}", what, problem));
  return message;
}

void post(int from, int to, int tag, Tensor data) { world::current().mailbox().post(from, to, tag, std::move(data)); }
Tensor take(int from, int to, int tag) { return world::current().mailbox().take(from, to, tag); }
void require_no_pending_messages(const char* where) { world::current().mailbox().require_empty(where); }

void require_in_world(const char* op, int from, int64_t to, int world) {
  if (to < -1)
    throw Error(fmt::format("{}: rank {} sends to rank {}; a destination is a rank of the world of {} rank(s) (0..{}), "
                            "or -1 for no send",
                            op, from, to, world, world - 1));
  if (to >= world)
    throw Error(fmt::format("{}: rank {} sends to rank {}, which is outside the world of {} rank(s) (0..{})", op, from,
                            to, world, world - 1));
}

}  // namespace tessera::comm
