#include "world/process_link.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <new>
#include <thread>
#include <tuple>
#include <utility>

#include "dispatch/backend.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "plugin/validation.hpp"
#include "world/chunk_view.hpp"

namespace tessera::world {
namespace {

// Tag regions, as fractions of the transport's tag space [0, max_tag]: collectives get the lower
// half (from tag 0), point-to-point a quarter, the link's control messages the rest.
struct Regions {
  int64_t collective_size;
  int64_t p2p_base, p2p_size;
  int64_t control_base, control_size;
};

Regions regions(int64_t max_tag) {
  const int64_t span = max_tag + 1;
  return {span / 2, span / 2, span / 4, span / 2 + span / 4, span - span / 2 - span / 4};
}

}  // namespace

uint64_t digest(const void* data, size_t bytes, uint64_t seed) {
  uint64_t h = seed;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  return h;
}

bool ProcessLink::poll(Callback<bool> done) const {
  if (done()) return true;  // the usual case for a small message: no clock read at all
  // Reading the clock costs about as much as one poll of the transport, so while spinning the
  // deadline is looked at every kClockEvery polls only (microseconds apart; the timeout is in
  // milliseconds); once yielding or sleeping, at every turn.
  constexpr int kClockEvery = 32;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  for (int spins = 1; !done(); ++spins) {
    if ((spins >= 128 || spins % kClockEvery == 0) && std::chrono::steady_clock::now() > deadline)
      return false;
    // A small message from a process on another core lands within a microsecond or two: polling
    // again at once is cheapest. Then yield (other processes may share this core), then sleep.
    if (spins < 128) continue;
    if (spins < 1024)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(spins < 4096 ? 10 : 500));
  }
  return true;
}

ProcessLink::ProcessLink(std::shared_ptr<const plugin::Transport> transport, int ranks_per_process,
                         int64_t timeout_ms)
    : transport_(std::move(transport)),
      name_(transport_->name()),
      ranks_per_process_(ranks_per_process),
      timeout_ms_(timeout_ms) {
  tessera_transport_config config{};
  config.struct_size = sizeof(config);
  config.timeout_ms = timeout_ms;
  tessera_transport_info info{};
  info.struct_size = sizeof(info);
  tessera_error error;
  dispatch::clear_error(error);
  if (transport_->init(config, info, error) != TESSERA_OK)
    throw Error(fmt::format("transport '{}' (plugin {}): init failed: {}", name_,
                            transport_->plugin().info().file.string(), plugin::error_text(error)));
  index_ = info.process_index;
  count_ = info.process_count;
  max_tag_ = info.max_tag;
  const auto close = [&](const std::string& problem) {
    tessera_error ignored;
    dispatch::clear_error(ignored);
    transport_->finalize(ignored);
    throw Error(fmt::format("transport '{}': {}", name_, problem));
  };
  if (count_ < 1 || index_ < 0 || index_ >= count_)
    close(fmt::format("init reported process {} of {}; expected 0 <= index < count", index_, count_));
  if (max_tag_ < 32767)
    close(fmt::format("init reported max_tag {}; transport.h promises at least 32767", max_tag_));
  const int64_t pairs = int64_t{ranks_per_process_} * ranks_per_process_;
  if (regions(max_tag_).p2p_size < pairs)
    close(fmt::format(
        "{} ranks per process need {} tags per pair of processes, but the transport's tags end at {}",
        ranks_per_process_, pairs * 4, max_tag_));
  collective_calls_ = static_cast<uint64_t>(regions(max_tag_).collective_size / pairs);
  // SDK 1.5 properties: the host zeroed them, so a transport that does not know them (or was built
  // for an older SDK) reports 0, "unknown". Written as negations so that NaN is refused too.
  for (const auto& [field, value, unit] : {std::tuple{"latency", info.latency, "seconds per message"},
                                           std::tuple{"bandwidth", info.bandwidth, "bytes per second"}})
    if (!(value >= 0) || std::isinf(value))
      close(fmt::format("init reported {} {}; expected a finite number of {} >= 0 (0: unknown)", field, value,
                        unit));
  if (info.max_message_bytes != 0 && info.max_message_bytes < TESSERA_TRANSPORT_LEAST_MAX_MESSAGE)
    close(fmt::format(
        "init reported max_message_bytes {}; expected 0 (no limit) or at least {} (the host's own "
        "messages must fit)",
        info.max_message_bytes, TESSERA_TRANSPORT_LEAST_MAX_MESSAGE));
  if (info.device_memory != 0 && info.device_memory != 1)
    close(fmt::format("init reported device_memory {}; expected 0 (host memory only) or 1",
                      info.device_memory));
  properties_ = LinkProperties{info.latency, info.bandwidth, info.max_message_bytes, info.device_memory == 1};
}

ProcessLink::~ProcessLink() {
  if (!broken()) settle_staged();  // which breaks the link when a peer never takes its sends
  if (broken()) {
    abort_transport();
    return;
  }
  std::lock_guard lock(mutex_);
  tessera_error error;
  dispatch::clear_error(error);
  // At exit a failure is logged, never thrown (a destructor) nor allowed to end the process.
  if (transport_->finalize(error) != TESSERA_OK)
    std::fprintf(stderr, "tessera: transport '%s' (plugin %s): finalize failed: %s\n", name_.c_str(),
                 transport_->plugin().info().name.c_str(), plugin::error_text(error).c_str());
}

void ProcessLink::fail(const std::string& call, const std::string& message) {
  const std::string text = fmt::format("transport '{}' (plugin {}, process {} of {}): {}: {}", name_,
                                       transport_->plugin().info().name, index_, count_, call, message);
  break_link(text);
  throw Error(text);
}

void ProcessLink::break_link(const std::string& reason) {
  std::lock_guard lock(broken_mutex_);
  if (broken_.load(std::memory_order_relaxed)) return;
  broken_reason_ = reason;
  broken_.store(true, std::memory_order_release);
}

void ProcessLink::refuse_broken(const char* call) const {
  std::lock_guard lock(broken_mutex_);
  throw Error(
      fmt::format("{}: the link of process {} to the other processes of its world broke earlier and no "
                  "collective or message can run on it any more (the process should exit; its transport "
                  "is aborted at exit); the first failure: {}",
                  call, index_, broken_reason_));
}

namespace {

// Memory a transport may still read or write after its link broke (the staged blocks and the
// buffers of abandoned requests): never freed, and kept reachable until the process ends (an
// aborted transport ends it; one without abort may go on using the memory). Only ever appended
// to; nothing reads it.
void keep_until_exit(std::shared_ptr<const void> bytes) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<const void>>();  // never destroyed
  const std::lock_guard lock(mutex);
  kept->push_back(std::move(bytes));
}

}  // namespace

void ProcessLink::abort_transport() noexcept {
  try {
    for (StagedSend& sent : staged_) keep_until_exit(std::shared_ptr<std::byte[]>(std::move(sent.block)));
    for (std::shared_ptr<const void>& held : held_in_flight_) keep_until_exit(std::move(held));
  } catch (...) {
    // Out of memory while keeping them: let go of them without freeing.
    for (StagedSend& sent : staged_) static_cast<void>(sent.block.release());
    for (std::shared_ptr<const void>& held : held_in_flight_)
      new (std::nothrow) std::shared_ptr<const void>(std::move(held));
  }
  std::string reason;
  {
    std::lock_guard lock(broken_mutex_);
    reason = broken_reason_;
  }
  if (!transport_->has_abort()) {
    std::fprintf(
        stderr,
        "tessera: the link to the other processes broke (%s); transport '%s' has no abort (SDK 1.5), so "
        "it is left without finalize\n",
        reason.c_str(), name_.c_str());
    return;
  }
  std::fprintf(stderr, "tessera: the link to the other processes broke (%s); aborting transport '%s'\n",
               reason.c_str(), name_.c_str());
  std::fflush(stderr);
  tessera_error error;
  dispatch::clear_error(error);
  try {
    if (transport_->abort(1, error) != TESSERA_OK)
      std::fprintf(stderr, "tessera: transport '%s': abort failed: %s\n", name_.c_str(),
                   plugin::error_text(error).c_str());
  } catch (...) {  // formatting the guard's text ran out of memory
    std::fprintf(stderr, "tessera: transport '%s': abort failed\n", name_.c_str());
  }
}

int64_t ProcessLink::collective_tag(uint64_t sequence, int from, int to) const {
  // Calls far apart may share a tag: messages of one (process pair, tag) arrive in order, and the
  // call sequence itself is checked by the collective fingerprints. A 64-bit division costs more
  // than the rest of this together; the first billion calls or so need none.
  const uint64_t slot = sequence < collective_calls_ ? sequence : sequence % collective_calls_;
  return static_cast<int64_t>(slot) * ranks_per_process_ * ranks_per_process_ +
         int64_t{from} * ranks_per_process_ + to;
}

int64_t ProcessLink::point_to_point_tag(int from, int to) const {
  return regions(max_tag_).p2p_base + int64_t{from} * ranks_per_process_ + to;
}

std::shared_ptr<ProcessLink::Request> ProcessLink::isend(const Tensor& chunk, int process, int64_t tag) {
  return std::make_shared<Request>(send_range(chunk.impl(), 0, chunk.numel(), process, tag));
}

std::shared_ptr<ProcessLink::Request> ProcessLink::irecv(const Tensor& chunk, int process, int64_t tag) {
  return std::make_shared<Request>(receive_range(chunk.impl(), 0, chunk.numel(), process, tag));
}

ProcessLink::Request ProcessLink::send_range(const std::shared_ptr<TensorImpl>& buffer, int64_t offset,
                                             int64_t count, int process, int64_t tag) {
  int64_t length = 0;
  return post(true, chunk_view(*buffer, offset, count, name_, length), buffer, process, tag);
}

ProcessLink::Request ProcessLink::receive_range(const std::shared_ptr<TensorImpl>& buffer, int64_t offset,
                                                int64_t count, int process, int64_t tag) {
  int64_t length = 0;
  return post(false, chunk_view(*buffer, offset, count, name_, length), buffer, process, tag);
}

ProcessLink::Request ProcessLink::post(bool send, const DLTensor& chunk, std::shared_ptr<const void> keep,
                                       int process, int64_t tag) {
  std::lock_guard lock(mutex_);
  return Request(*this, post_locked(send, chunk, process, tag), std::move(keep), send);
}

void* ProcessLink::post_locked(bool send, const DLTensor& chunk, int process, int64_t tag) {
  require_intact(send ? "isend" : "irecv");
  const auto what = [&] {
    return fmt::format("{} of {} element(s) {} process {} (tag {})", send ? "isend" : "irecv", chunk.shape[0],
                       send ? "to" : "from", process, tag);
  };
  if (const int64_t most = properties_.max_message_bytes; most > 0) {
    // chunk_view made it: 1-d, its length fits the buffer's bytes (no overflow).
    const int64_t bytes = chunk.shape[0] * ((int64_t{chunk.dtype.bits} * chunk.dtype.lanes + 7) / 8);
    if (bytes > most)
      fail(what(),
           fmt::format("the message is {} bytes, longer than the {} bytes the transport takes at most "
                       "(max_message_bytes, reported at init); the host does not split messages",
                       bytes, most));
  }
  tessera_transport_request handle = nullptr;
  tessera_error error;
  dispatch::clear_error(error);
  const tessera_status status = send ? transport_->isend(chunk, process, tag, handle, error)
                                     : transport_->irecv(chunk, process, tag, handle, error);
  if (status != TESSERA_OK) fail(what(), plugin::error_text(error));
  return handle;
}

bool ProcessLink::test(Request& request, Callback<std::string> what) {
  if (request.done_) return true;
  require_intact("test");
  std::lock_guard lock(mutex_);
  int32_t done = 0;
  tessera_error error;
  dispatch::clear_error(error);
  if (transport_->test(static_cast<tessera_transport_request>(request.handle_), done, error) != TESSERA_OK)
    fail(what(), plugin::error_text(error));
  request.done_ = done != 0;
  return request.done_;
}

void ProcessLink::free_locked(void* handle) {
  // After a failure the host calls nothing of the transport but abort (transport.h): a request
  // that completed before is left to the aborted transport, as the pending ones are.
  if (broken()) return;
  tessera_error error;
  dispatch::clear_error(error);
  if (transport_->free_request(static_cast<tessera_transport_request>(handle), error) != TESSERA_OK)
    std::fprintf(stderr, "tessera: transport '%s': free_request failed: %s\n", name_.c_str(),
                 plugin::error_text(error).c_str());
}

void ProcessLink::Request::release() {
  if (link_ == nullptr) return;
  std::lock_guard lock(link_->mutex_);
  release_locked();
}

void ProcessLink::Request::cancel_receive() {
  if (link_ == nullptr || send_) return release();
  std::lock_guard lock(link_->mutex_);
  if (link_->broken()) {
    link_->held_in_flight_.push_back(std::move(keep_));  // never freed: the transport may still use it
  } else {
    link_->free_locked(handle_);  // transport.h: freeing a pending receive cancels it
  }
  link_ = nullptr;
  handle_ = nullptr;
  keep_.reset();
  done_ = false;
}

void ProcessLink::Request::release_locked() {
  if (link_ == nullptr) return;
  if (done_)
    link_->free_locked(handle_);
  else
    abandon_locked();
  link_ = nullptr;
  handle_ = nullptr;
  keep_.reset();
  done_ = false;
}

void ProcessLink::Request::abandon_locked() {
  ProcessLink& link = *link_;
  const auto completed = [&] {
    int32_t done = 0;
    tessera_error error;
    dispatch::clear_error(error);
    return link.transport_->test(static_cast<tessera_transport_request>(handle_), done, error) ==
               TESSERA_OK &&
           done != 0;
  };
  if (link.broken()) {
    link.held_in_flight_.push_back(std::move(keep_));  // never freed: the transport may still use it
    return;
  }
  // Completed after all (nobody tested it since): nothing is in flight. A live peer takes a pending
  // send within the timeout (the world's end waits for a program's last sends this way, as
  // MPI_Finalize would).
  if (completed() || (send_ && link.poll([&] { return completed(); }))) {
    link.free_locked(handle_);
    return;
  }
  if (!send_) {
    // A receive can be cancelled (transport.h: its buffer is the host's again once freed), but the
    // message it waited for will arrive unclaimed: the processes are out of step.
    link.free_locked(handle_);
    link.break_link("a receive was abandoned before its message arrived");
    return;
  }
  link.break_link("a send was abandoned before the peer took it, within the timeout");
  link.held_in_flight_.push_back(std::move(keep_));
}

ProcessLink::Request& ProcessLink::Request::operator=(Request&& other) noexcept {
  if (this == &other) return *this;
  release();
  link_ = std::exchange(other.link_, nullptr);
  handle_ = std::exchange(other.handle_, nullptr);
  keep_ = std::move(other.keep_);
  done_ = std::exchange(other.done_, false);
  send_ = other.send_;
  return *this;
}

ProcessLink::ScratchReceive ProcessLink::receive_scratch(const TensorImpl& like, int64_t count, int process,
                                                         int64_t tag) {
  ScratchReceive receive;
  std::unique_lock lock(mutex_);
  const std::shared_ptr<TensorImpl>& spare = spare_scratch_;
  if (spare != nullptr && spare->dtype() == like.dtype() && spare->backend_ptr() == like.backend_ptr() &&
      spare->numel() >= count) {
    receive.scratch = std::move(spare_scratch_);
  } else {
    lock.unlock();  // an allocation needs no lock
    receive.scratch = TensorImpl::allocate({count}, like.dtype(), like.backend_ptr());
    lock.lock();
  }
  int64_t length = 0;
  const DLTensor chunk = chunk_view(*receive.scratch, 0, count, name_, length);
  // The request keeps nothing alive: the receive's owner holds the scratch and frees the request first.
  receive.request = Request(*this, post_locked(false, chunk, process, tag), nullptr, false);
  return receive;
}

void ProcessLink::end_scratch(ScratchReceive&& receive) {
  // Only small buffers are kept: a large message's allocation costs little next to its transfer.
  constexpr int64_t kKeptBytes = int64_t{64} << 10;
  std::shared_ptr<TensorImpl> scratch = std::move(receive.scratch);
  std::lock_guard lock(mutex_);
  receive.request.release_locked();  // the transport lets go of the scratch first
  if (scratch != nullptr && scratch->numel() * static_cast<int64_t>(itemsize(scratch->dtype())) <= kKeptBytes)
    spare_scratch_ = std::move(scratch);
}

std::vector<std::string> ProcessLink::allgather(const std::string& bytes, const std::string& what) {
  require_intact(what.c_str());
  if (!transport_->has_allgather()) return allgather_by_messages(bytes, what);
  std::string gathered(bytes.size() * static_cast<size_t>(count_), '\0');
  {
    std::lock_guard lock(mutex_);
    tessera_error error;
    dispatch::clear_error(error);
    const tessera_status status =
        transport_->allgather(bytes.data(), bytes.size(), gathered.data(), timeout_ms_, error);
    if (status == TESSERA_TIMEOUT) {
      // An all-gather does not say who is missing: every other process is a candidate.
      std::string others;
      for (int p = 0; p < count_; ++p)
        if (p != index_) others += fmt::format("{}{}", others.empty() ? "" : ", ", p);
      fail(what, fmt::format(
                     "not every process arrived within the timeout of {} ms: process {} waited, and at least "
                     "one of process(es) {} did not make this call (exited, stopped, or busy in another "
                     "call) ({})",
                     timeout_ms_, index_, others, plugin::error_text(error)));
    }
    if (status != TESSERA_OK) fail(what, plugin::error_text(error));
  }
  std::vector<std::string> each;
  for (int p = 0; p < count_; ++p)
    each.push_back(gathered.substr(static_cast<size_t>(p) * bytes.size(), bytes.size()));
  return each;
}

// Without the optional all-gather: every process sends its bytes to every other one.
std::vector<std::string> ProcessLink::allgather_by_messages(const std::string& bytes,
                                                            const std::string& what) {
  const Regions r = regions(max_tag_);
  const int64_t tag =
      r.control_base + static_cast<int64_t>(control_sequence_++ % static_cast<uint64_t>(r.control_size));
  auto each = std::make_shared<std::vector<std::string>>(static_cast<size_t>(count_), bytes);
  int64_t length = static_cast<int64_t>(bytes.size());
  const auto message = [&](int p) {
    DLTensor t{};
    t.data = (*each)[static_cast<size_t>(p)].data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = 1;
    t.dtype = DLDataType{kDLUInt, 8, 1};
    t.shape = &length;
    return t;
  };
  std::vector<Request> pending;
  pending.reserve(2 * static_cast<size_t>(count_));
  for (int p = 0; p < count_; ++p) {
    if (p == index_) continue;
    pending.push_back(post(false, message(p), each, p, tag));
    pending.push_back(post(true, message(index_), each, p, tag));
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    if (poll([&] { return test(pending[i], [&] { return what; }); })) continue;
    const int peer = static_cast<int>(i / 2) < index_ ? static_cast<int>(i / 2) : static_cast<int>(i / 2) + 1;
    fail(what, fmt::format(
                   "not every process arrived within the timeout of {} ms: process {} waited for process {}, "
                   "which did not make this call (exited, stopped, or busy in another call)",
                   timeout_ms_, index_, peer));
  }
  return *each;
}

}  // namespace tessera::world
