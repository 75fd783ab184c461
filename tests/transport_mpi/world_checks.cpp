// check_world, check_allgather and check_all.
#include <algorithm>
#include <string>
#include <vector>

#include "chunk.hpp"
#include "suite.hpp"

namespace transport_test {

void check_world(const tessera_transport_info& info, const World& expected) {
  expect(info.process_index == expected.index, "process_index " + std::to_string(info.process_index) +
                                                   ", expected " + std::to_string(expected.index));
  expect(info.process_count == expected.count, "process_count " + std::to_string(info.process_count) +
                                                   ", expected " + std::to_string(expected.count));
  // transport.h: max_tag >= 32767 (the least MPI_TAG_UB the MPI standard allows).
  expect(info.max_tag >= 32767, "max_tag " + std::to_string(info.max_tag) + ", expected >= 32767");
  // SDK 1.5 link properties, unconfigured: MPI tells neither latency nor bandwidth (0: unknown), the
  // transport cuts long chunks into parts itself (0: no limit) and takes host memory only.
  expect(info.latency == 0.0, "latency " + std::to_string(info.latency) + ", expected 0 (unknown)");
  expect(info.bandwidth == 0.0, "bandwidth " + std::to_string(info.bandwidth) + ", expected 0 (unknown)");
  expect(info.max_message_bytes == 0, "max_message_bytes " + std::to_string(info.max_message_bytes) +
                                          ", expected 0 (no limit: it splits)");
  expect(info.device_memory == 0, "device_memory " + std::to_string(info.device_memory) + ", expected 0");
}

void check_allgather(Client& client, const World& world) {
  if (!client.has_allgather()) {
    expect(false, "the transport has no allgather");
    return;
  }
  // Each process's string: its index in text, then pattern bytes; every process's differs.
  constexpr size_t kBytes = 24;
  const auto contribution = [&](int process) {
    std::vector<std::byte> bytes(kBytes);
    const std::string label = "process " + std::to_string(process) + ":";
    fill_pattern(bytes.data(), kBytes, process, 900);
    for (size_t i = 0; i < label.size() && i < kBytes; ++i) bytes[i] = static_cast<std::byte>(label[i]);
    return bytes;
  };
  const std::vector<std::byte> mine = contribution(world.index);
  std::vector<std::byte> all(kBytes * static_cast<size_t>(world.count), std::byte{0xEE});
  expect_ok(client.allgather(mine.data(), kBytes, all.data(), Client::kPatienceMs), "allgather of 24 bytes");
  for (int process = 0; process < world.count; ++process) {
    const std::vector<std::byte> expected = contribution(process);
    expect(std::equal(expected.begin(), expected.end(), all.begin() + process * static_cast<long>(kBytes)),
           "allgather: bytes at position " + std::to_string(process) + " are not process " +
               std::to_string(process) + "'s");
  }
  // 0 bytes per process: completes, writes nothing.
  std::byte untouched{0x5A};
  expect_ok(client.allgather(&untouched, 0, &untouched, Client::kPatienceMs), "allgather of 0 bytes");
  expect(untouched == std::byte{0x5A}, "allgather of 0 bytes wrote into recv");
}

void check_allgather_timeout(Client& client, const World& world) {
  constexpr size_t kBytes = 8;
  constexpr int64_t kPatternTag = 950;
  constexpr int64_t kGoTag = 60;
  constexpr std::byte kUntouched{0xEE};
  std::vector<std::byte> mine(kBytes);
  fill_pattern(mine.data(), kBytes, world.index, kPatternTag);
  std::vector<std::byte> all(kBytes * static_cast<size_t>(world.count), kUntouched);
  Chunk go = Chunk::of_bytes(1);
  if (world.index == 0) {
    // The others wait for our "go" before they call allgather: ours cannot complete in 50 ms.
    const Outcome timed_out = client.allgather(mine.data(), kBytes, all.data(), 50);
    expect_error(timed_out, TESSERA_TIMEOUT, {"allgather", "50 ms"},
                 "allgather while the others are held back");
    note("allgather 50 ms: " + timed_out.message);
    std::vector<tessera_transport_request> sends;
    for (int process = 1; process < world.count; ++process)
      sends.push_back(client.send(go.tensor(), process, kGoTag));
    for (tessera_transport_request send : sends) client.finish(send, "the go to join the allgather");
  } else {
    client.finish(client.recv(go.tensor(), 0, kGoTag), "the go to join the allgather");
    expect_ok(client.allgather(mine.data(), kBytes, all.data(), Client::kPatienceMs),
              "allgather joining process 0's timed-out one");
    for (int process = 0; process < world.count; ++process)
      expect(
          pattern_mismatch(all.data() + process * kBytes, kBytes, process, kPatternTag) == kBytes,
          "allgather joining a timed-out one: bytes at position " + std::to_string(process) + " are wrong");
  }
  // One more gather, everywhere: every process enters it only after finishing the first, so by its
  // end the gather left pending on process 0 has had its data; and process 0's recv, the
  // program's again since the timeout, must still be untouched.
  std::vector<std::byte> second(kBytes * static_cast<size_t>(world.count));
  expect_ok(client.allgather(mine.data(), kBytes, second.data(), Client::kPatienceMs),
            "allgather after the timed-out one");
  for (int process = 0; process < world.count; ++process)
    expect(pattern_mismatch(second.data() + process * kBytes, kBytes, process, kPatternTag) == kBytes,
           "allgather after a timed-out one: bytes at position " + std::to_string(process) + " are wrong");
  if (world.index == 0)
    expect(std::all_of(all.begin(), all.end(), [&](std::byte b) { return b == kUntouched; }),
           "a timed-out allgather wrote into recv after returning");
}

void check_all(Client& client, const World& world) {
  check_bad_arguments(client, world);
  check_allgather(client, world);
  if (world.count < 2) {
    note("1 process: no peer, exchanges skipped");
    return;
  }
  check_ring(client, world);
  check_test_before_send(client, world);
  check_timeout_and_cancel(client, world);
  check_length_mismatch(client, world);
  check_allgather_timeout(client, world);
  // Last, and again: what came before (cancelled and failed requests) left the transport usable.
  check_allgather(client, world);
}

}  // namespace transport_test
