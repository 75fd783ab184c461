// ProcessLink's staged sends (process_link.hpp, send_staged): small sends from copies the link
// owns, so that a collective neither waits for its small sends nor guards its buffers from them.
#include <fmt/format.h>

#include <cstring>

#include "dispatch/backend.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "plugin/validation.hpp"
#include "world/chunk_view.hpp"
#include "world/process_link.hpp"

namespace tessera::world {
namespace {

std::string staged_text(size_t bytes, int process, int64_t tag, uint64_t call) {
  return fmt::format("staged send of {} bytes to process {} (tag {}) of collective call #{}", bytes, process,
                     tag, call);
}

}  // namespace

void ProcessLink::send_staged(const void* header, size_t header_bytes, const TensorImpl& buffer,
                              int64_t offset, int64_t count, int process, int64_t tag, uint64_t call) {
  int64_t length = 0;
  const DLTensor source = chunk_view(buffer, offset, count, name_, length);
  // count lies inside the buffer (chunk_view checked), whose bytes exist: no overflow.
  const size_t payload_bytes = static_cast<size_t>(count) * itemsize(buffer.dtype());
  if (payload_bytes > kStagedBytes || header_bytes > kMostHeaderBytes)
    throw Error(
        fmt::format("transport '{}': a staged send holds at most {} bytes after a header of at most {}, but "
                    "{} after {} were asked for (internal error)",
                    name_, kStagedBytes, kMostHeaderBytes, payload_bytes, header_bytes));
  const size_t bytes = header_bytes + payload_bytes;
  require_intact("staged send");
  std::lock_guard lock(mutex_);
  // Looking at a send that is still pending costs as much as the transport's progress; by the
  // time a few more have been posted, the old ones have long completed and cost little to free.
  if (staged_.size() >= kReapAfter) reap_staged_locked();
  if (staged_.size() >= kMostStaged) {
    // The peers take messages more slowly than they come: wait for the oldest.
    const StagedSend& oldest = staged_.front();
    const std::string what = staged_text(oldest.bytes, oldest.process, oldest.tag, oldest.call);
    if (!poll([&] { return oldest_staged_done_locked(); }))
      fail(what,
           fmt::format(
               "the peer did not take it within the timeout of {} ms ([world] timeout, TESSERA_TIMEOUT)",
               timeout_ms_));
    reap_staged_locked();
  }
  std::unique_ptr<std::byte[]> block;
  if (spare_blocks_.empty()) {
    block = std::make_unique<std::byte[]>(kMostHeaderBytes + kStagedBytes);
  } else {
    block = std::move(spare_blocks_.back());
    spare_blocks_.pop_back();
  }
  if (header_bytes > 0) std::memcpy(block.get(), header, header_bytes);
  if (payload_bytes > 0) std::memcpy(block.get() + header_bytes, source.data, payload_bytes);
  DLTensor copy{};
  copy.data = block.get();
  copy.device = DLDevice{kDLCPU, 0};
  copy.ndim = 1;
  copy.dtype = DLDataType{kDLUInt, 8, 1};
  int64_t byte_length = static_cast<int64_t>(bytes);
  copy.shape = &byte_length;
  void* handle = nullptr;
  try {
    handle = post_locked(true, copy, process, tag);
  } catch (...) {
    spare_blocks_.push_back(std::move(block));
    throw;
  }
  staged_.push_back(StagedSend{handle, std::move(block), bytes, process, tag, call});
}

bool ProcessLink::staged_done_locked(StagedSend& sent) {
  int32_t done = 0;
  tessera_error error;
  dispatch::clear_error(error);
  if (transport_->test(static_cast<tessera_transport_request>(sent.handle), done, error) == TESSERA_OK)
    return done != 0;
  const std::string problem = plugin::error_text(error);
  const std::string what = staged_text(sent.bytes, sent.process, sent.tag, sent.call);
  // A failed request is still the host's to free (transport.h); the send is over either way.
  free_locked(sent.handle);
  spare_blocks_.push_back(std::move(sent.block));
  fail(what, problem);
}

bool ProcessLink::oldest_staged_done_locked() {
  try {
    return staged_done_locked(staged_.front());
  } catch (...) {
    staged_.erase(staged_.begin());  // failed and freed
    throw;
  }
}

void ProcessLink::reap_staged_locked() {
  // Messages to one peer complete in the order they were posted, and those to different peers
  // about so: the first pending one ends the look, so a steady stream tests one send per post.
  // The completed ones leave the list together (one move of the rest, not one per send).
  auto first_pending = staged_.begin();
  try {
    for (; first_pending != staged_.end() && staged_done_locked(*first_pending); ++first_pending) {
      free_locked(first_pending->handle);
      spare_blocks_.push_back(std::move(first_pending->block));
    }
  } catch (...) {
    staged_.erase(staged_.begin(), first_pending + 1);  // the failed one is freed too
    throw;
  }
  staged_.erase(staged_.begin(), first_pending);
}

void ProcessLink::settle_staged() {
  std::lock_guard lock(mutex_);
  try {
    while (!staged_.empty()) {
      if (!poll([&] { return oldest_staged_done_locked(); })) break;
      reap_staged_locked();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: %s\n", e.what());
  }
  // Still pending after the timeout (a peer that exited or stalled): the transport may still read
  // their blocks, and finalize could wait for the peer forever, so the link ends by abort.
  if (!staged_.empty())
    break_link(
        fmt::format("{} and {} more staged send(s) were still pending at the end, after the timeout of {} ms",
                    staged_text(staged_.front().bytes, staged_.front().process, staged_.front().tag,
                                staged_.front().call),
                    staged_.size() - 1, timeout_ms_));
}

}  // namespace tessera::world
