// One isend or irecv of the transport: what the host's opaque tessera_transport_request points to.
//
// Parts: MPI counts are `int`, so a chunk of 2 GiB or more cannot go as one MPI_BYTE message. A
// chunk is sent as consecutive messages ("parts") of at most max_part_bytes each, all with the
// chunk's tag; both sides cut the same way from their own buffer length, and MPI's non-overtaking
// rule (messages between one pair of processes on one communicator and tag match in the order they
// were posted) puts every part, and the parts of consecutive chunks, in order. Parts rather than a
// derived datatype (MPI_Type_contiguous) because the length check needs MPI_Get_count in bytes:
// with a derived type a short message is not a whole number of elements and MPI_Get_count gives
// MPI_UNDEFINED, so the error could not name the length that arrived. After a length mismatch in a
// chunk of several parts, the receive's later parts stay posted until free_request cancels them:
// a message sent on the same (peer, tag) before then could match them.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "chunk_bytes.hpp"
#include "tessera/sdk/status.h"
#include "tessera/sdk/transport.h"

namespace tessera::transport_mpi {

enum class Direction { send, receive };

class Message {
 public:
  // Describes the message; nothing is posted yet. `max_part_bytes` is in 1 .. INT_MAX.
  Message(Direction direction, MPI_Comm comm, int peer, int tag, ChunkBytes chunk, size_t max_part_bytes);
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  // Describes another message in a released one (nothing pending), so that the transport can reuse it.
  void reset(Direction direction, MPI_Comm comm, int peer, int tag, ChunkBytes chunk, size_t max_part_bytes);

  // Posts every part (MPI_Isend / MPI_Irecv). On failure releases the parts already posted and fails.
  void post();
  // Never blocks: true once every part has completed. A failure (an MPI error, a length mismatch)
  // fails now and again on every later call.
  bool test();
  // Cancels what is still pending and hands the buffer back; returns "" or, when MPI may still
  // read a send's buffer, why. Called once, by free_request; the Message is deleted right after.
  std::string release(int64_t send_grace_ms);

  // "receive of 8 bytes from process 1 with tag 7".
  std::string describe() const;

 private:
  size_t part_offset(size_t part) const { return part * max_part_bytes_; }
  int part_bytes(size_t part) const;
  // Records the failure of `part` (MPI_Test returned `code`) and fails with it.
  [[noreturn]] void fail_part(size_t part, int code);
  // Checks the length of a completed receive part; records and fails on a mismatch.
  void check_received(size_t part, const MPI_Status& status);
  [[noreturn]] void fail_recorded() const;

  Direction direction_;
  MPI_Comm comm_;
  int peer_;
  int tag_;
  ChunkBytes chunk_;
  size_t max_part_bytes_;
  // MPI_REQUEST_NULL once complete (MPI_Test sets it). Almost every chunk is one part, held inline:
  // a message of a small collective must not pay for a second allocation.
  MPI_Request one_part_ = MPI_REQUEST_NULL;
  std::unique_ptr<MPI_Request[]> many_parts_;
  std::span<MPI_Request> parts_;
  tessera_status failure_code_ = TESSERA_OK;
  std::string failure_;
};

// The host's opaque handle is a Message; these convert between the two.
inline tessera_transport_request to_handle(Message* message) {
  return reinterpret_cast<tessera_transport_request>(message);
}
inline Message* from_handle(tessera_transport_request request) { return reinterpret_cast<Message*>(request); }

}  // namespace tessera::transport_mpi
