#include "comm/mailbox.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "comm/envelope.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
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
  if (std::optional<Tensor> data = try_take(from, to, tag)) return std::move(*data);
  throw Error(fmt::format(
      "recv on rank {} from rank {}{}: no matching send (rank {} sent nothing to rank {}{} that is "
      "still unreceived)",
      to, from, tag_text(tag), from, to, tag_text(tag)));
}

std::optional<Tensor> Mailbox::try_take(int from, int to, int tag) {
  if (!holds_messages_.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto it = messages_.find({from, to, tag});
  if (it == messages_.end() || it->second.empty()) return std::nullopt;
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
    pending += fmt::format("{}{} message(s) from rank {} to rank {}{}", pending.empty() ? "" : ", ",
                           queue.size(), std::get<0>(key), std::get<1>(key), tag_text(std::get<2>(key)));
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

using Header = RemoteStream::Header;
static_assert(sizeof(Header) % sizeof(int64_t) == 0);
constexpr int64_t kHeaderWords = static_cast<int64_t>(sizeof(Header) / sizeof(int64_t));

Envelope point_to_point_envelope(const world::WorldState& w, int from, int to, int tag, MessageKind kind,
                                 DType dtype, const Shape& sizes, uint64_t sequence) {
  Envelope e;
  e.kind = kind;
  e.dtype = static_cast<uint8_t>(dtype);
  e.call = sequence;
  e.fingerprint = bytes_digest(sizes.data(), sizes.size() * sizeof(int64_t));
  e.sender = from;
  e.receiver = to;
  e.count = shape_numel(sizes);
  e.tag = tag;
  e.has_checksum = w.check_collectives() ? 1 : 0;
  return e;
}

// Waits for `request` (at most the world's timeout); a timeout breaks the link.
void await(world::ProcessLink& link, world::ProcessLink::Request& request, const std::string& what,
           int from) {
  if (link.poll([&] { return link.test(request, [&] { return what; }); })) return;
  const std::string text = fmt::format(
      "{}: no message within the timeout of {} ms ([world] timeout, TESSERA_TIMEOUT); did rank {} send one?",
      what, link.timeout_ms(), from);
  link.break_link(text);
  throw Error(text);
}

[[noreturn]] void reject(world::ProcessLink& link, const std::string& text) {
  link.break_link(text);
  throw Error(text);
}

// A plain tensor (a factory would make a local one under LocalMode) on the CPU backend.
Tensor plain_empty(const Shape& sizes, DType dtype) {
  const DisabledLocalMode plain;
  return empty(sizes, TensorOptions(dtype));
}

// The shape a header declares, or nothing when its rank count is out of range.
std::optional<Shape> declared_shape(const Header& header) {
  if (header.ndim < 0 || header.ndim > kMaxDims) return std::nullopt;
  return Shape(header.sizes.begin(), header.sizes.begin() + header.ndim);
}

// What is wrong with a header that arrived as message `sequence` from `from` to `to`, judged by
// what it says it is (its own tag, kind, dtype and shape); empty when it is that message.
std::string header_problem(const world::WorldState& w, const Header& header, int from, int to,
                           uint64_t sequence) {
  const Envelope& got = header.envelope;
  const std::optional<Shape> shape = declared_shape(header);
  const bool kind_known = got.kind == MessageKind::point_to_point || got.kind == MessageKind::gradient;
  if (!shape || !kind_known || got.dtype >= kNumDTypes) {
    // Judged against an ordinary message of this pair: the envelope's check names what is wrong.
    const Envelope expected = point_to_point_envelope(w, from, to, got.tag, MessageKind::point_to_point,
                                                      kFloat32, Shape{}, sequence);
    std::string problem = envelope_problem(got, expected);
    return problem.empty()
               ? fmt::format("the message's header declares {} dimensions; at most {} are possible",
                             header.ndim, kMaxDims)
               : problem;
  }
  return envelope_problem(got, point_to_point_envelope(w, from, to, got.tag, got.kind,
                                                       static_cast<DType>(got.dtype), *shape, sequence));
}

}  // namespace

void post_remote(world::WorldState& w, int from, int to, int tag, const Tensor& data, MessageKind kind) {
  world::ProcessLink& link = *w.link();
  const int64_t transport_tag = link.point_to_point_tag(w.position(from), w.position(to));
  Header header;
  header.envelope = point_to_point_envelope(w, from, to, tag, kind, data.dtype(), data.sizes(),
                                            mailbox_of(w).next_remote(from, to, true));
  seal(header.envelope, data.impl()->bytes_at(), static_cast<size_t>(data.numel()) * itemsize(data.dtype()));
  header.ndim = data.dim();
  std::copy(data.sizes().begin(), data.sizes().end(), header.sizes.begin());
  link.send_staged(&header, sizeof(header), *data.impl(), 0, 0, w.process_of(to), transport_tag,
                   header.envelope.call);
  auto request = link.isend(data, w.process_of(to), transport_tag);
  const std::string what =
      fmt::format("send from rank {} to rank {} (process {})", from, to, w.process_of(to));
  mailbox_of(w).hold(request, [&link, what](void* r) {
    // A copy of the text on every call (performance-no-automatic-move would have it moved out).
    return link.test(*static_cast<world::ProcessLink::Request*>(r),
                     [&] { return what; });  // NOLINT(performance-no-automatic-move)
  });
}

Tensor take_remote(int from, int to, int tag, const Tensor& like) {
  world::WorldState& w = world::current();
  world::ProcessLink& link = *w.link();
  const int64_t transport_tag = link.point_to_point_tag(w.position(from), w.position(to));
  const std::string what =
      fmt::format("recv on rank {} from rank {} (process {}){}", to, from, w.process_of(from), tag_text(tag));
  const auto fits = [&](const Tensor& message, DType dtype, const Shape& sizes) {
    if (dtype != like.dtype())
      reject(link, fmt::format("{}: the message holds {} but the receiving tensor is {}", what,
                               dtype_name(dtype), dtype_name(like.dtype())));
    if (sizes != like.sizes())
      reject(link, fmt::format("{}: the message has shape {} but the receiving tensor has {}", what,
                               shape_text(sizes), shape_text(like.sizes())));
    return message;
  };
  // A message with this tag that arrived while an earlier receive waited for another tag.
  if (std::optional<Tensor> kept = mailbox_of(w).try_take(from, to, tag))
    return fits(*kept, kept->dtype(), kept->sizes());
  for (;;) {
    // The header first: a message that does not fit the receiving tensor is named before its bytes land.
    const Tensor header_bytes = plain_empty({kHeaderWords}, kInt64);
    const auto header_request = link.irecv(header_bytes, w.process_of(from), transport_tag);
    await(link, *header_request, what, from);
    Header header;
    std::memcpy(&header, header_bytes.impl()->bytes_at(), sizeof(header));
    const Envelope& got = header.envelope;
    const uint64_t sequence = mailbox_of(w).next_remote(from, to, false);
    const bool ours = got.kind == MessageKind::point_to_point && got.tag == tag;
    if (ours && got.dtype != static_cast<uint8_t>(like.dtype()) && got.dtype < kNumDTypes)
      fits(Tensor(), static_cast<DType>(got.dtype), like.sizes());
    if (const std::optional<Shape> sent = declared_shape(header); ours && sent)
      fits(Tensor(), like.dtype(), *sent);
    if (std::string problem = header_problem(w, header, from, to, sequence); !problem.empty())
      reject(link, fmt::format("{}: {}", what, problem));
    Tensor message = plain_empty(*declared_shape(header), static_cast<DType>(got.dtype));
    const auto request = link.irecv(message, w.process_of(from), transport_tag);
    await(link, *request, what, from);
    if (std::string problem =
            payload_problem(got, message.impl()->bytes_at(),
                            static_cast<size_t>(message.numel()) * itemsize(message.dtype()));
        !problem.empty())
      reject(link, fmt::format("{}: {}", what, problem));
    if (ours) return message;
    if (got.kind != MessageKind::point_to_point)
      reject(link, fmt::format("{}: a gradient message from rank {} arrived; only ts::spawn passes gradients "
                               "between processes",
                               what, from));
    mailbox_of(w).post(from, to, got.tag, std::move(message));  // for the receive of its own tag
  }
}

RemoteStream::RemoteStream(world::WorldState& w, int from, int to)
    : world_(&w), from_(from), to_(to), header_bytes_(plain_empty({kHeaderWords}, kInt64)) {
  post_header();
}

void RemoteStream::post_header() {
  world::ProcessLink& link = *world_->link();
  header_request_ = link.irecv(header_bytes_, world_->process_of(from_),
                               link.point_to_point_tag(world_->position(from_), world_->position(to_)));
}

void RemoteStream::close() {
  if (header_request_ != nullptr) header_request_->cancel_receive();
  if (payload_request_ != nullptr) payload_request_->cancel_receive();
}

std::optional<RemoteStream::Message> RemoteStream::poll() {
  world::ProcessLink& link = *world_->link();
  const auto what = [&] {
    return fmt::format("receiving on rank {} from rank {} (process {})", to_, from_,
                       world_->process_of(from_));
  };
  if (payload_request_ == nullptr) {
    if (!link.test(*header_request_, what)) return std::nullopt;
    std::memcpy(&header_, header_bytes_.impl()->bytes_at(), sizeof(header_));
    const uint64_t sequence = mailbox_of(*world_).next_remote(from_, to_, false);
    if (std::string problem = header_problem(*world_, header_, from_, to_, sequence); !problem.empty())
      reject(link, fmt::format("{}: {}", what(), problem));
    payload_ = plain_empty(*declared_shape(header_), static_cast<DType>(header_.envelope.dtype));
    const int64_t transport_tag = link.point_to_point_tag(world_->position(from_), world_->position(to_));
    payload_request_ = link.irecv(payload_, world_->process_of(from_), transport_tag);
    post_header();  // after the payload's receive: the transport matches in posting order
  }
  if (!link.test(*payload_request_, what)) return std::nullopt;
  payload_request_.reset();
  const Envelope& got = header_.envelope;
  if (std::string problem =
          payload_problem(got, payload_.impl()->bytes_at(),
                          static_cast<size_t>(payload_.numel()) * itemsize(payload_.dtype()));
      !problem.empty())
    reject(link, fmt::format("{}: {}", what(), problem));
  return Message{got.tag, got.kind, std::exchange(payload_, Tensor())};
}

Mailbox& mailbox_of(world::WorldState& w) {
  // The world holds it without knowing its type: this layer makes it, on the world's first message.
  constexpr world::SlotMaker make = [] { return std::shared_ptr<void>(std::make_shared<Mailbox>()); };
  return *static_cast<Mailbox*>(w.slot(world::Slot::mailbox, make));
}

void post(int from, int to, int tag, Tensor data) {
  mailbox_of(world::current()).post(from, to, tag, std::move(data));
}
Tensor take(int from, int to, int tag) { return mailbox_of(world::current()).take(from, to, tag); }
void require_no_pending_messages(const char* where) { mailbox_of(world::current()).require_empty(where); }

void require_in_world(const char* op, int from, int64_t to, int world) {
  if (to < -1)
    throw Error(fmt::format(
        "{}: rank {} sends to rank {}; a destination is a rank of the world of {} rank(s) (0..{}), "
        "or -1 for no send",
        op, from, to, world, world - 1));
  if (to >= world)
    throw Error(fmt::format("{}: rank {} sends to rank {}, which is outside the world of {} rank(s) (0..{})",
                            op, from, to, world, world - 1));
}

}  // namespace tessera::comm
