#include "comm/mailbox.hpp"

#include <deque>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera::comm {
namespace {
std::mutex mutex;
std::map<std::pair<int, int>, std::deque<Tensor>> messages;
}  // namespace

void post(int from, int to, Tensor data) {
  std::lock_guard lock(mutex);
  messages[{from, to}].push_back(std::move(data));
}

Tensor take(int from, int to) {
  std::lock_guard lock(mutex);
  auto it = messages.find({from, to});
  if (it == messages.end() || it->second.empty())
    throw Error(fmt::format("recv on rank {} from rank {}: no matching send (rank {} sent nothing to rank {} that is "
                            "still unreceived)",
                            to, from, from, to));
  Tensor data = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) messages.erase(it);
  return data;
}

void require_no_pending_messages(const char* where) {
  std::lock_guard lock(mutex);
  if (messages.empty()) return;
  std::string pending;
  for (const auto& [pair, queue] : messages)
    pending += fmt::format("{}{} message(s) from rank {} to rank {}", pending.empty() ? "" : ", ", queue.size(),
                           pair.first, pair.second);
  messages.clear();
  throw Error(fmt::format("{}: unmatched send(s): {} never received", where, pending));
}

}  // namespace tessera::comm
