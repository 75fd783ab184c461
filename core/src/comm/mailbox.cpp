#include "comm/mailbox.hpp"

#include <fmt/format.h>

#include "tessera/errors.hpp"
#include "world/process_link.hpp"
#include "world/world.hpp"
#include "tessera/factories.hpp"


namespace tessera::comm {

void Mailbox::post(int from, int to, Tensor data) {
  std::lock_guard lock(mutex_);
  messages_[{from, to}].push_back(std::move(data));
  holds_messages_.store(true, std::memory_order_release);
}

Tensor Mailbox::take(int from, int to) {
  std::lock_guard lock(mutex_);
  auto it = messages_.find({from, to});
  if (it == messages_.end() || it->second.empty())
    throw Error(fmt::format("recv on rank {} from rank {}: no matching send (rank {} sent nothing to rank {} that is "
                            "still unreceived)",
                            to, from, from, to));
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
  for (const auto& [pair, queue] : messages_)
    pending += fmt::format("{}{} message(s) from rank {} to rank {}", pending.empty() ? "" : ", ", queue.size(),
                           pair.first, pair.second);
  messages_.clear();
  holds_messages_.store(false, std::memory_order_release);
  throw Error(fmt::format("{}: unmatched send(s): {} never received", where, pending));
}

void Mailbox::hold(std::shared_ptr<void> request, std::function<bool(void*)> done) {
  std::lock_guard lock(mutex_);
  std::erase_if(remote_sends_, [](const auto& sent) { return sent.second(sent.first.get()); });
  remote_sends_.emplace_back(std::move(request), std::move(done));
}

void post_remote(int from, int to, Tensor data) {
  world::WorldState& w = world::current();
  world::ProcessLink& link = *w.link();
  auto request = link.isend(data, w.process_of(to), link.point_to_point_tag(w.position(from), w.position(to)));
  const std::string what = fmt::format("send from rank {} to rank {} (process {})", from, to, w.process_of(to));
  w.mailbox().hold(request, [&link, what](void* r) {
    return link.test(*static_cast<world::ProcessLink::Request*>(r), [&] { return what; });
  });
}

Tensor take_remote(int from, int to, const Tensor& like) {
  world::WorldState& w = world::current();
  world::ProcessLink& link = *w.link();
  Tensor message = empty_like(like.contiguous());
  auto request = link.irecv(message, w.process_of(from), link.point_to_point_tag(w.position(from), w.position(to)));
  const std::string what = fmt::format("recv on rank {} from rank {} (process {})", to, from, w.process_of(from));
  if (!link.poll([&] { return link.test(*request, [&] { return what; }); }))
    throw Error(fmt::format("{}: no message within the timeout of {} ms ([world] timeout, TESSERA_TIMEOUT); did "
                            "rank {} send one?",
                            what, link.timeout_ms(), from));
  return message;
}

void post(int from, int to, Tensor data) { world::current().mailbox().post(from, to, std::move(data)); }
Tensor take(int from, int to) { return world::current().mailbox().take(from, to); }
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
