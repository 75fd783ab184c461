// The envelope every message between processes carries in front of its payload, so that the
// receiver can tell a message that does not belong where it arrived, instead of computing with it.
//
// A transport matches messages by (process, tag) only, and tags repeat (every few million calls,
// and all messages of one pair of ranks in one call share one). What tags cannot tell apart, the
// envelope does: which call sent it (its sequence number and a digest of what the call is: the
// operation, group, dtype, shape, reduce op, root and algorithm; a point-to-point message's tag),
// which rank sent it to which,
// the how-many-th message between them it is, and how many elements follow. With checks on
// ([world] check_collectives, TESSERA_DEBUG=1) it also carries a digest of the payload. A skipped
// or mismatched collective, a message sent into the wrong call, and a transport that reorders or
// corrupts messages thus fail with an Error on the receiving process, on every message, at the
// cost of 64 bytes and a digest of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::comm {

// What a message is: a collective's, a user's point-to-point message, or a gradient that the
// differentiable send/recv pair passes back (which never matches a user's receive).
enum class MessageKind : uint8_t { collective = 1, point_to_point = 2, gradient = 3 };

struct Envelope {
  uint32_t magic = 0;
  MessageKind kind = MessageKind::collective;
  uint8_t collective = 0;    // TESSERA_COLL_* (point-to-point: 0)
  uint8_t reduce_op = 0;     // the schedule's TESSERA_REDUCE_*
  uint8_t dtype = 0;         // tessera::DType
  uint64_t call = 0;         // the collective call's sequence number; point-to-point: the message's, per pair
  uint64_t fingerprint = 0;  // digest of what the call is (see above); point-to-point: of the shape
  int32_t sender = 0;        // global ranks
  int32_t receiver = 0;
  uint32_t ordinal = 0;  // the how-many-th message from sender to receiver within the call
  int32_t root = -1;
  int64_t count = 0;      // payload elements
  uint64_t checksum = 0;  // payload digest, when has_checksum
  uint32_t has_checksum = 0;
  int32_t tag = 0;    // point-to-point and gradient messages: the sender's tag (collectives: 0)
  uint64_t seal = 0;  // digest of every field above: a corrupt envelope is told from a foreign one
};
static_assert(sizeof(Envelope) == 72, "the envelope's layout is part of the wire format");

// Bytes reserved in front of a payload for the envelope: a multiple of every dtype's size, so that
// the payload after it stays aligned for its elements.
inline constexpr size_t kEnvelopeBytes = 80;

// A fast 64-bit digest of bytes (8 at a time), for payload checksums and group members.
uint64_t bytes_digest(const void* data, size_t bytes, uint64_t seed = 0x9e3779b97f4a7c15ull);

// Fills in magic and seal; `payload` (bytes long) is digested into checksum when the envelope's
// has_checksum is set.
void seal(Envelope& envelope, const void* payload, size_t payload_bytes);

// Empty when `got` is a sealed envelope equal to `expected` in every field but the checksum;
// otherwise what is wrong, in words naming both sides' calls (the caller says where it arrived).
std::string envelope_problem(const Envelope& got, const Envelope& expected);
// Empty when `got` carries no checksum or the payload's bytes match it; otherwise what is wrong.
std::string payload_problem(const Envelope& got, const void* payload, size_t payload_bytes);

}  // namespace tessera::comm
