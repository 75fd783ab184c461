// transport_mpi_parts <process count>: the mpi transport built from its sources with chunks cut
// into MPI messages of at most 1000 bytes (the plugin cuts at 1 GiB, too big to test), so that a
// chunk of several parts, and its length errors, can be checked with small messages.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "checks.hpp"
#include "chunk.hpp"
#include "client.hpp"
#include "mpi_transport.hpp"
#include "suite.hpp"

using namespace transport_test;

namespace {

constexpr size_t kPartBytes = 1000;

struct Pair {
  std::unique_ptr<Chunk> out;
  std::unique_ptr<Chunk> in;
  tessera_transport_request send = nullptr;
  tessera_transport_request receive = nullptr;
};

// Sizes around the part boundaries, all on one tag: each must arrive whole and in order.
void check_sizes(Client& client, const World& world) {
  constexpr int64_t kTag = 1;
  const std::vector<size_t> sizes = {0, 1, 999, 1000, 1001, 4500, 2500, 2500};
  std::vector<Pair> pairs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const DLDataType bytes{kDLUInt, 8, 1};
    const std::vector<int64_t> shape{static_cast<int64_t>(sizes[i])};
    Pair pair{std::make_unique<Chunk>(sizes[i], bytes, shape),
              std::make_unique<Chunk>(sizes[i], bytes, shape)};
    // The pattern's tag is the message's position, so that swapped messages of one size show.
    fill_pattern(pair.out->storage().data(), sizes[i], world.index, static_cast<int64_t>(i));
    pair.receive = client.recv(pair.in->tensor(), world.left(), kTag);
    pair.send = client.send(pair.out->tensor(), world.right(), kTag);
    pairs.push_back(std::move(pair));
  }
  for (size_t i = pairs.size(); i-- > 0;) {
    const std::string what = "message " + std::to_string(i) + " of " + std::to_string(sizes[i]) + " bytes";
    client.finish(pairs[i].receive, what);
    const size_t bad =
        pattern_mismatch(pairs[i].in->storage().data(), sizes[i], world.left(), static_cast<int64_t>(i));
    expect(bad == sizes[i], what + ": byte " + std::to_string(bad) + " differs from the sender's");
  }
  for (Pair& pair : pairs) client.finish(pair.send, "a send of several parts");
}

// A mismatch in a chunk of several parts is named with the sender's whole length; afterwards the
// (peer, tag) carries messages normally again, once both sides have finished with the failed one.
void check_mismatch(Client& client, const World& world) {
  struct Case {
    int64_t tag;
    size_t sent;
    size_t buffer;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {2, 2100, 4500, {"has 2100 bytes", "expected 4500"}},  // the third of five parts comes short
      {3, 4600, 4500, {"more than 4500 bytes"}},             // the fifth part overflows
  };
  for (const Case& c : cases) {
    Chunk out = Chunk::of_bytes(c.sent);
    Chunk in = Chunk::of_bytes(c.buffer);
    tessera_transport_request send = client.send(out.tensor(), world.right(), c.tag);
    tessera_transport_request receive = client.recv(in.tensor(), world.left(), c.tag);
    if (receive != nullptr) {
      const Outcome failed = client.wait(receive, Client::kPatienceMs);
      expect(failed.status != TESSERA_OK && failed.status != TESSERA_TIMEOUT,
             "mismatch on tag " + std::to_string(c.tag) + ": status " + std::to_string(failed.status));
      for (const std::string& part : c.parts)
        expect(failed.message.find(part) != std::string::npos,
               "'" + failed.message + "' lacks '" + part + "'");
      // Frees (cancels) the parts still posted, which would otherwise take the next message.
      expect_ok(client.free_request(receive), "free_request of the failed receive");
    }
    client.finish(send, "send of " + std::to_string(c.sent) + " bytes");

    // "My failed receive is gone" to the left, and the same from the right, before the next message.
    Chunk go_out = Chunk::of_bytes(1);
    Chunk go_in = Chunk::of_bytes(1);
    tessera_transport_request go = client.send(go_out.tensor(), world.left(), 10 + c.tag);
    tessera_transport_request go_back = client.recv(go_in.tensor(), world.right(), 10 + c.tag);
    client.finish(go_back, "go");
    client.finish(go, "go");

    Chunk next_out = Chunk::of_bytes(3000);
    Chunk next_in = Chunk::of_bytes(3000);
    fill_pattern(next_out.storage().data(), 3000, world.index, c.tag);
    tessera_transport_request next_send = client.send(next_out.tensor(), world.right(), c.tag);
    tessera_transport_request next_receive = client.recv(next_in.tensor(), world.left(), c.tag);
    client.finish(next_receive, "the message after the mismatch");
    client.finish(next_send, "the message after the mismatch");
    expect(pattern_mismatch(next_in.storage().data(), 3000, world.left(), c.tag) == 3000,
           "the message after the mismatch on tag " + std::to_string(c.tag) + " arrived wrong");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <process count>\n", argv[0]);
    return 2;
  }
  const World known = launched_world(argv[1]);
  static tessera::transport_mpi::MpiTransport mpi(kPartBytes);
  static tessera::sdk::TransportBuilder<tessera::transport_mpi::MpiTransport> builder("mpi", mpi);
  Client client(*builder.table());

  tessera_transport_info info{};
  const Outcome joined = client.init(30000, info);
  expect_ok(joined, "init");
  if (joined.status != TESSERA_OK) return 1;
  World world = known;
  world.max_tag = info.max_tag;
  check_world(info, known);
  if (world.count > 1) {
    check_sizes(client, world);
    check_mismatch(client, world);
  }
  expect_ok(client.finalize(), "finalize");
  if (failure_count() > 0) {
    std::fprintf(stderr, "[process %d] %d check(s) failed\n", known.index, failure_count());
    return 1;
  }
  note("all checks passed");
  return 0;
}
