#include "comm/envelope.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "comm/schedule.hpp"
#include "tessera/dtype.hpp"

namespace tessera::comm {
namespace {

constexpr uint32_t kMagic = 0x54534d31;  // "TSM1"

// One round of a 64-bit mixer (the finaliser of MurmurHash3): every input bit reaches every output bit.
uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

uint64_t seal_of(const Envelope& e) { return bytes_digest(&e, offsetof(Envelope, seal), kMagic); }

std::string dtype_text(uint8_t code) {
  return code < kNumDTypes ? std::string(dtype_name(static_cast<DType>(code)))
                           : fmt::format("dtype #{}", code);
}

// "all_reduce call #3 (float32, 16 element(s), sum)" or "point-to-point message #2 (float32, 4 element(s))".
std::string call_text(const Envelope& e) {
  if (e.kind == MessageKind::point_to_point || e.kind == MessageKind::gradient)
    return fmt::format("{} message #{} ({}, {} element(s), tag {})",
                       e.kind == MessageKind::gradient ? "gradient" : "point-to-point", e.call,
                       dtype_text(e.dtype), e.count, e.tag);
  std::string text = fmt::format("{} call #{} ({}, {} element(s)", collective_name(e.collective), e.call,
                                 dtype_text(e.dtype), e.count);
  if (reducing(e.collective)) text += fmt::format(", {}", reduce_op_name(e.reduce_op));
  if (rooted(e.collective)) text += fmt::format(", root {}", e.root);
  return text + ")";
}

}  // namespace

uint64_t bytes_digest(const void* data, size_t bytes, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  // Four independent lanes (a dependent multiply per word would cap it at one word per few cycles).
  std::array<uint64_t, 4> lane = {seed, seed ^ 0x243f6a8885a308d3ull, seed ^ 0x13198a2e03707344ull,
                                  seed ^ 0xa4093822299f31d0ull};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (size_t k = 0; k < 4; ++k) {
      uint64_t word;
      std::memcpy(&word, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ word) * 0x9e3779b97f4a7c15ull;
      lane[k] ^= lane[k] >> 29;
    }
  uint64_t h = mix(lane[0]) ^ mix(lane[1] + 1) ^ mix(lane[2] + 2) ^ mix(lane[3] + 3);
  for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return mix(h ^ bytes);
}

void seal(Envelope& envelope, const void* payload, size_t payload_bytes) {
  envelope.magic = kMagic;
  envelope.checksum = envelope.has_checksum != 0 ? bytes_digest(payload, payload_bytes) : 0;
  envelope.seal = seal_of(envelope);
}

std::string envelope_problem(const Envelope& got, const Envelope& expected) {
  if (got.magic != kMagic || got.seal != seal_of(got))
    return fmt::format(
        "the message's envelope is corrupt (magic {:#010x}, seal {:#018x}; expected magic {:#010x}): "
        "the transport damaged the message, or it is not one of Tessera's",
        got.magic, got.seal, kMagic);
  if (got.kind != expected.kind || got.collective != expected.collective || got.call != expected.call ||
      got.dtype != expected.dtype || got.count != expected.count || got.reduce_op != expected.reduce_op ||
      got.root != expected.root || got.tag != expected.tag)
    return fmt::format(
        "the message belongs to {}, but the receiving rank runs {}: the processes made different "
        "calls here (a skipped, extra or mismatched collective or send)",
        call_text(got), call_text(expected));
  if (got.fingerprint != expected.fingerprint)
    return fmt::format(
        "the message belongs to {} of another kind than the receiving rank's (its digest {:#018x}, "
        "the receiver's {:#018x}): the calls differ in their operation, group, tensor shape, reduce op "
        "(such as SUM against AVG) or algorithm (collective rules)",
        call_text(got), got.fingerprint, expected.fingerprint);
  if (got.sender != expected.sender || got.receiver != expected.receiver)
    return fmt::format(
        "the message of {} went from rank {} to rank {}, but it arrived as one from rank {} to rank {}",
        call_text(got), got.sender, got.receiver, expected.sender, expected.receiver);
  if (got.ordinal != expected.ordinal)
    return fmt::format(
        "message {} from rank {} to rank {} of {} arrived where message {} was expected: the "
        "transport delivered messages out of order",
        got.ordinal, got.sender, got.receiver, call_text(got), expected.ordinal);
  if (got.has_checksum != expected.has_checksum)
    return fmt::format(
        "the sender {} a payload checksum and the receiver {} one: the processes disagree on "
        "[world] check_collectives (TESSERA_DEBUG)",
        got.has_checksum ? "sent" : "did not send", expected.has_checksum ? "expects" : "does not expect");
  return {};
}

std::string payload_problem(const Envelope& got, const void* payload, size_t payload_bytes) {
  if (got.has_checksum == 0) return {};
  const uint64_t computed = bytes_digest(payload, payload_bytes);
  if (computed == got.checksum) return {};
  return fmt::format(
      "the payload of {} from rank {} to rank {} is corrupt: its checksum is {:#018x}, the bytes "
      "that arrived give {:#018x}",
      call_text(got), got.sender, got.receiver, got.checksum, computed);
}

}  // namespace tessera::comm
