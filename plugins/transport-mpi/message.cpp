#include "message.hpp"

#include <algorithm>

#include "mpi_error.hpp"
#include "polling.hpp"
#include "tessera/sdk/cpp/errors.hpp"

namespace tessera::transport_mpi {

Message::Message(Direction direction, MPI_Comm comm, int peer, int tag, ChunkBytes chunk,
                 size_t max_part_bytes) {
  reset(direction, comm, peer, tag, chunk, max_part_bytes);
}

void Message::reset(Direction direction, MPI_Comm comm, int peer, int tag, ChunkBytes chunk,
                    size_t max_part_bytes) {
  direction_ = direction;
  comm_ = comm;
  peer_ = peer;
  tag_ = tag;
  chunk_ = chunk;
  max_part_bytes_ = max_part_bytes;
  failure_code_ = TESSERA_OK;
  failure_.clear();
  // A 0-byte chunk is still one (empty) message: the receiver posts one receive for it.
  const size_t count = std::max<size_t>(1, (chunk_.bytes + max_part_bytes_ - 1) / max_part_bytes_);
  one_part_ = MPI_REQUEST_NULL;
  if (count == 1) {
    many_parts_.reset();
    parts_ = std::span<MPI_Request>(&one_part_, 1);
  } else {
    many_parts_ = std::make_unique<MPI_Request[]>(count);
    parts_ = std::span<MPI_Request>(many_parts_.get(), count);
    std::fill(parts_.begin(), parts_.end(), MPI_REQUEST_NULL);
  }
}

int Message::part_bytes(size_t part) const {
  return static_cast<int>(std::min(max_part_bytes_, chunk_.bytes - part_offset(part)));
}

std::string Message::describe() const {
  const std::string bytes = std::to_string(chunk_.bytes) + " bytes";
  return direction_ == Direction::send ? "send of " + bytes + " to process " + std::to_string(peer_) +
                                             " with tag " + std::to_string(tag_)
                                       : "receive of " + bytes + " from process " + std::to_string(peer_) +
                                             " with tag " + std::to_string(tag_);
}

void Message::post() {
  for (size_t part = 0; part < parts_.size(); ++part) {
    // A 0-byte chunk may have a NULL data pointer; MPI never touches the buffer of a 0-count message.
    std::byte* data = chunk_.data != nullptr ? chunk_.data + part_offset(part) : nullptr;
    const int code = direction_ == Direction::send
                         ? MPI_Isend(data, part_bytes(part), MPI_BYTE, peer_, tag_, comm_, &parts_[part])
                         : MPI_Irecv(data, part_bytes(part), MPI_BYTE, peer_, tag_, comm_, &parts_[part]);
    if (code != MPI_SUCCESS) {
      release(0);
      check_mpi(code, std::string(direction_ == Direction::send ? "isend: MPI_Isend" : "irecv: MPI_Irecv") +
                          " of the " + describe() + " failed");
    }
  }
}

bool Message::test() {
  if (failure_code_ != TESSERA_OK) fail_recorded();
  bool all_done = true;
  // Every pending part is tested, not only the first: a send's parts may complete out of order
  // (an eager part before a rendezvous one), and each MPI_Test drives progress.
  for (size_t part = 0; part < parts_.size(); ++part) {
    if (parts_[part] == MPI_REQUEST_NULL) continue;
    int flag = 0;
    MPI_Status status;
    const int code = MPI_Test(&parts_[part], &flag, &status);
    if (code != MPI_SUCCESS) fail_part(part, code);
    if (!flag) {
      all_done = false;
      continue;
    }
    if (direction_ == Direction::receive) check_received(part, status);
  }
  return all_done;
}

void Message::check_received(size_t part, const MPI_Status& status) {
  int count = 0;
  // Every receive comes here: the message for a failure is built only on failure.
  if (const int code = MPI_Get_count(&status, MPI_BYTE, &count); code != MPI_SUCCESS)
    check_mpi(code, "MPI_Get_count of the " + describe());
  if (count == part_bytes(part)) return;
  // The sender cut its chunk at the same part boundaries, so every part before this one was full
  // and the sender's chunk is this part's offset plus what arrived.
  failure_code_ = TESSERA_INVALID_ARGUMENT;
  failure_ = "message from process " + std::to_string(peer_) + " tag " + std::to_string(tag_) + " has " +
             std::to_string(part_offset(part) + static_cast<size_t>(count)) + " bytes, expected " +
             std::to_string(chunk_.bytes) + " (the receive buffer's length)";
  fail_recorded();
}

void Message::fail_part(size_t part, int code) {
  // A request that completed with an error has been freed by MPI_Test; set it to NULL in case the
  // implementation left the handle, so release() does not cancel a freed request.
  parts_[part] = MPI_REQUEST_NULL;
  if (direction_ == Direction::receive && mpi_error_class(code) == MPI_ERR_TRUNCATE) {
    // MPI does not say how long a truncated message was; only that it did not fit.
    failure_code_ = TESSERA_INVALID_ARGUMENT;
    failure_ = "message from process " + std::to_string(peer_) + " tag " + std::to_string(tag_) +
               " has more than " + std::to_string(chunk_.bytes) + " bytes, expected " +
               std::to_string(chunk_.bytes) + " (the receive buffer's length)";
  } else {
    failure_code_ = TESSERA_INTERNAL;
    failure_ = "the " + describe() + " failed: " + mpi_error_text(code);
  }
  fail_recorded();
}

void Message::fail_recorded() const { fail(failure_code_, failure_); }

std::string Message::release(int64_t send_grace_ms) {
  const auto any_pending = [&] {
    return std::any_of(parts_.begin(), parts_.end(), [](MPI_Request r) { return r != MPI_REQUEST_NULL; });
  };
  if (!any_pending()) return {};
  for (MPI_Request& part : parts_)
    if (part != MPI_REQUEST_NULL) MPI_Cancel(&part);  // an error here shows in the completion below

  if (direction_ == Direction::receive) {
    // MPI standard, "Cancel": once a request is marked for cancellation, MPI_Wait on it returns
    // whatever the other processes do (it is local): the receive is either cancelled or, if it had
    // already matched a message, completed. Either way the buffer is the host's again. Errors
    // (say a truncation) no longer matter: the host has given up the receive.
    for (MPI_Request& part : parts_)
      if (part != MPI_REQUEST_NULL) MPI_Wait(&part, MPI_STATUS_IGNORE);
    return {};
  }

  // Sends: the standard makes MPI_Wait after MPI_Cancel local for sends too, but Open MPI does not
  // cancel sends (MPI_Cancel of a send returns success and does nothing; MPI 4.0 deprecates
  // cancelling sends), so an MPI_Wait would block until the receiver takes the message, possibly
  // forever. Poll for a bounded time instead: a small (eager) message completes locally at once.
  const bool settled = poll_until(send_grace_ms, [&] {
    for (MPI_Request& part : parts_) {
      if (part == MPI_REQUEST_NULL) continue;
      int flag = 0;
      if (MPI_Test(&part, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) part = MPI_REQUEST_NULL;
    }
    return !any_pending();
  });
  if (settled) return {};
  // Still pending: let MPI finish the send in the background (MPI_Request_free keeps the send
  // going), and say that its buffer is not free yet.
  for (MPI_Request& part : parts_)
    if (part != MPI_REQUEST_NULL) MPI_Request_free(&part);
  return "the " + describe() + " could neither be cancelled (MPI cannot cancel sends) nor complete within " +
         std::to_string(send_grace_ms) + " ms; MPI may still read its buffer until process " +
         std::to_string(peer_) + " receives it";
}

}  // namespace tessera::transport_mpi
