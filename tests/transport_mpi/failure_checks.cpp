// check_timeout_and_cancel, check_length_mismatch, check_bad_arguments: the errors of transport.h.
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "chunk.hpp"
#include "suite.hpp"

namespace transport_test {
namespace {

std::string process_text(int process) { return "process " + std::to_string(process); }
std::string tag_text(int64_t tag) { return "tag " + std::to_string(tag); }

// A 1-byte message to `to` and one from `from` on `tag`, both awaited: "I am past this point".
void handshake(Client& client, int to, int from, int64_t tag) {
  Chunk out = Chunk::of_bytes(1);
  Chunk in = Chunk::of_bytes(1);
  tessera_transport_request send = client.send(out.tensor(), to, tag);
  tessera_transport_request receive = client.recv(in.tensor(), from, tag);
  client.finish(receive, "handshake from " + process_text(from) + " " + tag_text(tag));
  client.finish(send, "handshake to " + process_text(to) + " " + tag_text(tag));
}

}  // namespace

void check_timeout_and_cancel(Client& client, const World& world) {
  constexpr int64_t kTag = 30;
  constexpr int64_t kCancelledTag = 31;
  Chunk never = Chunk::of_bytes(8);
  tessera_transport_request receive = client.recv(never.tensor(), world.left(), kTag);
  if (receive != nullptr) {
    const auto start = std::chrono::steady_clock::now();
    const Outcome timed_out = client.wait(receive, 50);
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
            .count();
    expect_error(timed_out, TESSERA_TIMEOUT, {"50 ms", "receive", process_text(world.left()), tag_text(kTag)},
                 "wait 50 ms on a receive never sent");
    if (world.index == 0) note("wait 50 ms: " + timed_out.message);
    expect(waited >= 50 && waited < 5000, "wait 50 ms took " + std::to_string(waited) + " ms");
    expect_error(client.wait(receive, 0), TESSERA_TIMEOUT, {"0 ms"}, "wait 0 ms on a receive never sent");
    int32_t done = -1;
    expect_ok(client.test(receive, done), "test of the timed-out receive");
    expect(done == 0, "test of the timed-out receive: done " + std::to_string(done) + ", expected 0");
    expect_ok(client.free_request(receive), "free_request of a pending receive (cancels it)");
  }
  // Only now does the left neighbour send on kTag. Had the cancelled receive stayed posted, it
  // would take this message and the fresh receive below would time out.
  handshake(client, world.left(), world.right(), kCancelledTag);
  Chunk late_out = Chunk::of_bytes(8);
  Chunk late_in = Chunk::of_bytes(8);
  fill_pattern(late_out.storage().data(), 8, world.index, kTag);
  tessera_transport_request late_send = client.send(late_out.tensor(), world.right(), kTag);
  tessera_transport_request late_receive = client.recv(late_in.tensor(), world.left(), kTag);
  client.finish(late_receive, "the message sent after the cancel");
  client.finish(late_send, "the message sent after the cancel");
  expect(pattern_mismatch(late_in.storage().data(), 8, world.left(), kTag) == 8,
         "the message sent after the cancel arrived wrong");
  std::vector<std::byte> untouched(8, std::byte{0});
  expect(std::memcmp(never.storage().data(), untouched.data(), 8) == 0,
         "the cancelled receive's buffer was written");
}

void check_length_mismatch(Client& client, const World& world) {
  struct Case {
    int64_t tag;
    size_t sent;
    size_t buffer;
    std::vector<std::string> parts;  // the message names both lengths (a longer one only as "more than")
  };
  const std::vector<Case> cases = {
      {40, 16, 24, {"has 16 bytes", "expected 24"}},
      {41, 32, 24, {"more than 24 bytes"}},
  };
  for (const Case& c : cases) {
    Chunk out = Chunk::of_bytes(c.sent);
    Chunk in = Chunk::of_bytes(c.buffer);
    tessera_transport_request send = client.send(out.tensor(), world.right(), c.tag);
    tessera_transport_request receive = client.recv(in.tensor(), world.left(), c.tag);
    if (receive != nullptr) {
      const std::string what =
          std::to_string(c.sent) + " bytes into a " + std::to_string(c.buffer) + "-byte receive";
      Outcome failed = client.wait(receive, Client::kPatienceMs);
      if (world.index == 0) note(what + ": " + failed.message);
      expect(failed.status != TESSERA_OK && failed.status != TESSERA_TIMEOUT,
             what + ": status " + std::to_string(failed.status) + " (" + failed.message +
                 "), expected an error");
      for (const std::string& part : c.parts)
        expect(failed.message.find(part) != std::string::npos,
               what + ": '" + failed.message + "' lacks '" + part + "'");
      for (const std::string& part : {process_text(world.left()), tag_text(c.tag)})
        expect(failed.message.find(part) != std::string::npos,
               what + ": '" + failed.message + "' lacks '" + part + "'");
      // The failure stays: test reports it again.
      int32_t done = -1;
      expect(client.test(receive, done).status == failed.status,
             what + ": test after the failure did not fail again");
      expect_ok(client.free_request(receive), what + ": free_request of the failed receive");
    }
    client.finish(send, "send of " + std::to_string(c.sent) + " bytes");
  }
}

void check_bad_arguments(Client& client, const World& world) {
  const int other = world.right();
  Chunk good = Chunk::of_bytes(4);
  const auto refused = [&](const DLTensor& chunk, int64_t peer, int64_t tag,
                           std::initializer_list<std::string> parts, const std::string& what) {
    for (bool send : {true, false}) {
      tessera_transport_request request = nullptr;
      const Outcome outcome =
          send ? client.isend(chunk, peer, tag, request) : client.irecv(chunk, peer, tag, request);
      expect_error(outcome, TESSERA_INVALID_ARGUMENT, parts,
                   std::string(send ? "isend" : "irecv") + " with " + what);
      if (world.index == 0 && send) note(what + ": " + outcome.message);
      expect(request == nullptr, what + ": a request was made although the call failed");
      if (outcome.status == TESSERA_OK && request != nullptr) client.free_request(request);
    }
  };
  refused(good.tensor(), world.count, 0, {"peer " + std::to_string(world.count)}, "peer = process count");
  refused(good.tensor(), -1, 0, {"peer -1"}, "peer -1");
  refused(good.tensor(), world.index, 0, {"peer " + std::to_string(world.index), "this process"},
          "itself as peer");
  expect_error(client.wait(nullptr, 0), TESSERA_INVALID_ARGUMENT, {"NULL"}, "wait on a NULL request");
  // With one process every peer is out of range or this one: the checks below need another.
  if (world.count < 2) return;
  refused(good.tensor(), other, -1, {"tag -1"}, "tag -1");
  if (world.max_tag < INT64_MAX)
    refused(good.tensor(), other, world.max_tag + 1, {"tag " + std::to_string(world.max_tag + 1)},
            "tag max_tag + 1");

  Chunk on_gpu = Chunk::of_bytes(4);
  on_gpu.tensor().device = DLDevice{kDLCUDA, 0};
  refused(on_gpu.tensor(), other, 0, {"device type " + std::to_string(static_cast<int>(kDLCUDA))},
          "a CUDA chunk");
  Chunk transposed(16, DLDataType{kDLFloat, 32, 1}, {2, 2}, {1, 2});
  refused(transposed.tensor(), other, 0, {"strides [1, 2]"}, "transposed strides");
  Chunk negative(16, DLDataType{kDLFloat, 32, 1}, {-3});
  refused(negative.tensor(), other, 0, {"-3"}, "a negative dim");
  Chunk no_bits(4, DLDataType{kDLFloat, 0, 1}, {4});
  refused(no_bits.tensor(), other, 0, {"0 bits"}, "a 0-bit dtype");
  Chunk no_data = Chunk::of_bytes(4);
  no_data.tensor().data = nullptr;
  refused(no_data.tensor(), other, 0, {"4 bytes", "NULL"}, "NULL data");

  // A valid request with a negative timeout: the builder refuses it before the transport sees it.
  {
    Chunk out = Chunk::of_bytes(4);
    Chunk in = Chunk::of_bytes(4);
    tessera_transport_request send = client.send(out.tensor(), world.right(), 50);
    tessera_transport_request receive = client.recv(in.tensor(), world.left(), 50);
    if (receive != nullptr)
      expect_error(client.wait(receive, -5), TESSERA_INVALID_ARGUMENT, {"-5"}, "wait with timeout -5");
    client.finish(receive, "receive on tag 50");
    client.finish(send, "send on tag 50");
  }
}

}  // namespace transport_test
