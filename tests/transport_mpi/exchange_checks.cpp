// check_ring and check_test_before_send: messages that should arrive, arriving right.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "chunk.hpp"
#include "suite.hpp"

namespace transport_test {
namespace {

struct Posted {
  std::unique_ptr<Chunk> chunk;
  tessera_transport_request request = nullptr;
  std::string what;
};

// Several int32 messages on each (peer, tag), received in posting order whatever the wait order.
void check_order(Client& client, const World& world) {
  const std::vector<int64_t> tags = {1, 2, world.max_tag};
  constexpr int kMessages = 3;
  constexpr int kElements = 5;
  const auto value = [](int sender, int64_t tag, int sequence, int element) {
    return static_cast<int32_t>(sender * 1000000 + static_cast<int>(tag % 1000) * 1000 + sequence * 100 +
                                element);
  };
  const DLDataType int32{kDLInt, 32, 1};
  std::vector<Posted> receives;
  std::vector<Posted> sends;
  for (int64_t tag : tags)
    for (int sequence = 0; sequence < kMessages; ++sequence) {
      Posted receive{std::make_unique<Chunk>(kElements * 4, int32, std::vector<int64_t>{kElements}), nullptr,
                     "message " + std::to_string(sequence) + " with tag " + std::to_string(tag)};
      receive.request = client.recv(receive.chunk->tensor(), world.left(), tag);
      receives.push_back(std::move(receive));
    }
  for (int64_t tag : tags)
    for (int sequence = 0; sequence < kMessages; ++sequence) {
      Posted send{std::make_unique<Chunk>(kElements * 4, int32, std::vector<int64_t>{kElements}), nullptr,
                  "send " + std::to_string(sequence) + " with tag " + std::to_string(tag)};
      for (int element = 0; element < kElements; ++element) {
        const int32_t v = value(world.index, tag, sequence, element);
        std::memcpy(send.chunk->storage().data() + element * 4, &v, 4);
      }
      send.request = client.send(send.chunk->tensor(), world.right(), tag);
      sends.push_back(std::move(send));
    }
  // Waiting from the last receive back changes nothing: matching follows posting order.
  for (auto it = receives.rbegin(); it != receives.rend(); ++it) client.finish(it->request, it->what);
  size_t index = 0;
  for (int64_t tag : tags)
    for (int sequence = 0; sequence < kMessages; ++sequence, ++index)
      for (int element = 0; element < kElements; ++element) {
        int32_t got = 0;
        std::memcpy(&got, receives[index].chunk->storage().data() + element * 4, 4);
        const int32_t expected = value(world.left(), tag, sequence, element);
        expect(got == expected, "ring " + receives[index].what + " element " + std::to_string(element) +
                                    ": got " + std::to_string(got) + ", expected " +
                                    std::to_string(expected));
      }
  for (Posted& send : sends) client.finish(send.request, send.what);
}

// One DLTensor layout and the byte length transport.h gives it, worked out by hand.
struct Layout {
  const char* name;
  DLDataType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  size_t byte_offset;
  size_t bytes;
};

// Sizes 0, 1 and 1 MiB on one tag, then dtypes and shapes: each arrives whole, where it should,
// and nothing beyond it is written.
void check_layouts(Client& client, const World& world) {
  const std::vector<Layout> layouts = {
      {"0 bytes, NULL data", {kDLUInt, 8, 1}, {0}, {}, 0, 0},
      {"1 byte", {kDLUInt, 8, 1}, {1}, {}, 0, 1},
      {"1 MiB", {kDLUInt, 8, 1}, {1 << 20}, {}, 0, 1 << 20},
      {"float64 [3, 4] strides [4, 1]", {kDLFloat, 64, 1}, {3, 4}, {4, 1}, 0, 96},
      {"int16 [7]", {kDLInt, 16, 1}, {7}, {}, 0, 14},
      {"bfloat16 [2, 1, 3], any stride on the size-1 dim", {kDLBfloat, 16, 1}, {2, 1, 3}, {3, 99, 1}, 0, 12},
      {"float32x4 [3]", {kDLFloat, 32, 4}, {3}, {}, 0, 48},
      {"int4 [5]: a byte per element", {kDLInt, 4, 1}, {5}, {}, 0, 5},
      {"1-bit x 12 lanes [2]: 2 bytes per element", {kDLUInt, 1, 12}, {2}, {}, 0, 4},
      {"complex64 [2]", {kDLComplex, 64, 1}, {2}, {}, 0, 16},
      {"uint8 [0, 3]", {kDLUInt, 8, 1}, {0, 3}, {}, 0, 0},
      {"float32 0-d", {kDLFloat, 32, 1}, {}, {}, 0, 4},
      {"uint8 [6] at byte_offset 8", {kDLUInt, 8, 1}, {6}, {}, 8, 6},
  };
  constexpr size_t kGuard = 16;  // bytes past the chunk that must stay untouched
  constexpr std::byte kUntouched{0xEE};
  std::vector<Posted> receives;
  std::vector<Posted> sends;
  for (size_t i = 0; i < layouts.size(); ++i) {
    const Layout& layout = layouts[i];
    // The first three share tag 10 (different sizes in order); the others have one tag each.
    const int64_t tag = i < 3 ? 10 : 100 + static_cast<int64_t>(i);
    const size_t storage =
        i == 0 ? 0 : layout.byte_offset + layout.bytes + kGuard;  // case 0: no storage at all
    Posted receive{
        std::make_unique<Chunk>(storage, layout.dtype, layout.shape, layout.strides, layout.byte_offset),
        nullptr, layout.name};
    std::fill(receive.chunk->storage().begin(), receive.chunk->storage().end(), kUntouched);
    receive.request = client.recv(receive.chunk->tensor(), world.left(), tag);
    receives.push_back(std::move(receive));

    Posted send{
        std::make_unique<Chunk>(storage, layout.dtype, layout.shape, layout.strides, layout.byte_offset),
        nullptr, layout.name};
    if (layout.bytes > 0)
      fill_pattern(send.chunk->storage().data() + layout.byte_offset, layout.bytes, world.index, tag);
    send.request = client.send(send.chunk->tensor(), world.right(), tag);
    sends.push_back(std::move(send));
  }
  for (size_t i = 0; i < layouts.size(); ++i) {
    const Layout& layout = layouts[i];
    const int64_t tag = i < 3 ? 10 : 100 + static_cast<int64_t>(i);
    client.finish(receives[i].request, std::string("receive of ") + layout.name);
    const std::vector<std::byte>& got = receives[i].chunk->storage();
    if (got.empty()) continue;
    const size_t bad = pattern_mismatch(got.data() + layout.byte_offset, layout.bytes, world.left(), tag);
    expect(bad == layout.bytes, std::string(layout.name) + ": byte " + std::to_string(bad) + " of " +
                                    std::to_string(layout.bytes) + " differs from the sender's");
    bool outside_untouched = true;
    for (size_t b = 0; b < got.size(); ++b)
      if ((b < layout.byte_offset || b >= layout.byte_offset + layout.bytes) && got[b] != kUntouched)
        outside_untouched = false;
    expect(outside_untouched, std::string(layout.name) + ": bytes outside the chunk were written");
  }
  for (Posted& send : sends) client.finish(send.request, std::string("send of ") + send.what);
}

}  // namespace

void check_ring(Client& client, const World& world) {
  check_order(client, world);
  check_layouts(client, world);
}

void check_test_before_send(Client& client, const World& world) {
  constexpr int64_t kDataTag = 20;
  constexpr int64_t kGoTag = 21;
  Chunk data_in = Chunk::of_bytes(64);
  Chunk data_out = Chunk::of_bytes(64);
  Chunk go_in = Chunk::of_bytes(1);
  Chunk go_out = Chunk::of_bytes(1);
  fill_pattern(data_out.storage().data(), 64, world.index, kDataTag);

  // The left neighbour sends the data only after our "go", which we send after this test: its
  // send cannot have been posted, so the receive cannot be complete.
  tessera_transport_request receive = client.recv(data_in.tensor(), world.left(), kDataTag);
  int32_t done = -1;
  if (receive != nullptr) {
    expect_ok(client.test(receive, done), "test before the send is posted");
    expect(done == 0, "test before the send is posted: done " + std::to_string(done) + ", expected 0");
  }
  tessera_transport_request go = client.send(go_out.tensor(), world.left(), kGoTag);
  tessera_transport_request go_from_right = client.recv(go_in.tensor(), world.right(), kGoTag);
  client.finish(go_from_right, "the go from the right");
  tessera_transport_request send = client.send(data_out.tensor(), world.right(), kDataTag);

  if (receive != nullptr) {
    expect_ok(client.wait(receive, Client::kPatienceMs), "wait for the data after the go");
    for (int again = 0; again < 2; ++again) {
      done = -1;
      expect_ok(client.test(receive, done), "test after completion");
      expect(done == 1, "test after completion: done " + std::to_string(done) + ", expected 1");
    }
    expect_ok(client.free_request(receive), "free_request of the completed receive");
    const size_t bad = pattern_mismatch(data_in.storage().data(), 64, world.left(), kDataTag);
    expect(bad == 64, "data after the go: byte " + std::to_string(bad) + " differs from the sender's");
  }
  client.finish(go, "the go to the left");
  client.finish(send, "the data to the right");
}

}  // namespace transport_test
