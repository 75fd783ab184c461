// The envelope of messages between processes (comm/envelope.hpp): a receiver accepts exactly the
// message it expects and names every other kind of difference; the seal tells damage from a
// foreign message; the payload checksum catches any flipped bit. (The same checks across processes,
// through faulty transports and mismatched programs, run under mpirun in tests/mpi.)
#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "comm/envelope.hpp"
#include "tessera/sdk/collective.h"
#include "tessera/dtype.hpp"

namespace comm = tessera::comm;

namespace {

comm::Envelope all_reduce_message(std::vector<float>& payload, bool checksum) {
  comm::Envelope e;
  e.kind = comm::MessageKind::collective;
  e.collective = TESSERA_COLL_ALL_REDUCE;
  e.reduce_op = TESSERA_REDUCE_SUM;
  e.dtype = static_cast<uint8_t>(tessera::DType::Float32);
  e.call = 7;
  e.fingerprint = 0x1234;
  e.sender = 1;
  e.receiver = 0;
  e.ordinal = 2;
  e.root = 0;
  e.count = static_cast<int64_t>(payload.size());
  e.has_checksum = checksum ? 1 : 0;
  comm::seal(e, payload.data(), payload.size() * sizeof(float));
  return e;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a message is accepted exactly where it is expected") {
  std::vector<float> payload = {1.5f, -2.0f, 3.25f};
  const comm::Envelope sent = all_reduce_message(payload, true);
  const comm::Envelope expected =
      all_reduce_message(payload, true);  // what the receiver builds: the same fields
  CHECK(comm::envelope_problem(sent, expected).empty());
  CHECK(comm::payload_problem(sent, payload.data(), payload.size() * sizeof(float)).empty());
}

TEST_CASE("each difference between the sender's call and the receiver's is named") {
  std::vector<float> payload = {1.0f, 2.0f};
  const comm::Envelope sent = all_reduce_message(payload, false);
  struct Case {
    const char* what;
    void (*change)(comm::Envelope&);
    const char* says;
  };
  const Case cases[] = {
      {"another call", [](comm::Envelope& e) { e.call = 8; }, "belongs to all_reduce call #7"},
      {"another collective", [](comm::Envelope& e) { e.collective = TESSERA_COLL_BROADCAST; },
       "the receiving rank runs broadcast call #7"},
      {"another reduce op", [](comm::Envelope& e) { e.reduce_op = TESSERA_REDUCE_MAX; },
       "(float32, 2 element(s), max)"},
      {"another dtype", [](comm::Envelope& e) { e.dtype = static_cast<uint8_t>(tessera::DType::Int64); },
       "(int64, 2 element(s), sum)"},
      {"another count", [](comm::Envelope& e) { e.count = 5; }, "5 element(s)"},
      {"another fingerprint", [](comm::Envelope& e) { e.fingerprint = 0x9999; },
       "of another kind than the receiving rank's"},
      {"another sender", [](comm::Envelope& e) { e.sender = 3; },
       "went from rank 1 to rank 0, but it arrived as one from rank 3"},
      {"another ordinal", [](comm::Envelope& e) { e.ordinal = 3; },
       "message 2 from rank 1 to rank 0 of all_reduce call #7"},
      {"checksums on one side only", [](comm::Envelope& e) { e.has_checksum = 1; },
       "disagree on [world] check_collectives"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    comm::Envelope expected = sent;
    c.change(expected);
    const std::string problem = comm::envelope_problem(sent, expected);
    CAPTURE(problem);
    CHECK(contains(problem, c.says));
  }
}

TEST_CASE("a damaged envelope is told from a foreign one, and a flipped payload bit from none") {
  std::vector<float> payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<float>(i) * 0.37f - 11.0f;
  const comm::Envelope sent = all_reduce_message(payload, true);
  // Any one bit of the sealed fields flipped: the seal no longer matches.
  for (size_t byte = 0; byte < offsetof(comm::Envelope, seal); byte += 5) {
    comm::Envelope damaged = sent;
    reinterpret_cast<unsigned char*>(&damaged)[byte] ^= 0x10;
    CAPTURE(byte);
    CHECK(contains(comm::envelope_problem(damaged, sent), "envelope is corrupt"));
  }
  // Any one payload bit flipped, first, last and in between: the checksum catches it.
  const size_t bytes = payload.size() * sizeof(float);
  for (size_t byte : {size_t{0}, size_t{1}, size_t{31}, size_t{32}, bytes / 2, bytes - 1}) {
    std::vector<float> damaged = payload;
    reinterpret_cast<unsigned char*>(damaged.data())[byte] ^= 0x01;
    CAPTURE(byte);
    CHECK(contains(comm::payload_problem(sent, damaged.data(), bytes), "is corrupt: its checksum"));
  }
  // Without a checksum the payload is not looked at.
  const comm::Envelope unchecked = all_reduce_message(payload, false);
  std::vector<float> other(payload.size(), 0.0f);
  CHECK(comm::payload_problem(unchecked, other.data(), bytes).empty());
}

TEST_CASE("bytes_digest tells apart what differs in one byte or in length, and agrees with itself") {
  std::vector<unsigned char> a(77);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 13 + 5);
  const uint64_t whole = comm::bytes_digest(a.data(), a.size());
  CHECK(comm::bytes_digest(a.data(), a.size()) == whole);
  CHECK(comm::bytes_digest(a.data(), a.size() - 1) != whole);
  std::vector<unsigned char> zeros_short(8, 0), zeros_long(16, 0);
  CHECK(comm::bytes_digest(zeros_short.data(), 8) != comm::bytes_digest(zeros_long.data(), 16));
  for (size_t i = 0; i < a.size(); ++i) {
    std::vector<unsigned char> b = a;
    b[i] ^= 0x80;
    CAPTURE(i);
    CHECK(comm::bytes_digest(b.data(), b.size()) != whole);
  }
}
