// Reading one const plain tensor from several threads at once, each thread in a LocalMode (a world)
// of its own: distribute_tensor, from_local, data_ptr and to_dlpack replicate the tensor and hand
// out its address, and so change its Storage's sharing state. Those changes must not race: run
// under ThreadSanitizer by scripts/tsan.sh. Every round starts from a fresh tensor, so its first
// replicas and first exports are made by several threads at once. Expected values are the source
// values, computed here.
#include <doctest/doctest.h>

#include <dlpack/dlpack.h>

#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

constexpr int kThreads = 4;
constexpr int kRanks = 4;
constexpr int kRounds = 24;
constexpr int64_t kElements = int64_t{1} << 14;  // 64 KiB of float32: copies long enough to overlap

// 0, 0.5, 1, 1.5, ...: exact in float32, distinct per element.
std::vector<float> halves(int64_t begin, int64_t end) {
  std::vector<float> v;
  for (int64_t i = begin; i < end; ++i) v.push_back(0.5f * static_cast<float>(i));
  return v;
}

// What one thread found wrong, reported by the main thread after the join (doctest's assertions
// are not made from the reading threads).
using Failures = std::vector<std::string>;

void expect_values(const ts::Tensor& t, const std::vector<float>& expected, const std::string& what,
                   Failures& failures) {
  if (t.to_vector<float>() != expected) failures.push_back(what + " does not hold the source values");
}

// Runs `read(source, failures)` on kThreads threads at once, kRounds times, each round on a fresh
// plain tensor holding halves(0, kElements); fails on anything a thread reported.
template <class Read>
void read_concurrently(Read read) {
  for (int round = 0; round < kRounds; ++round) {
    ts::Tensor source;
    {
      ts::DisabledLocalMode plain;
      source = ts::from_values(halves(0, kElements), {kElements});
    }
    const ts::Tensor& shared_source = source;  // every thread reads it; nobody writes it
    std::vector<Failures> failures(kThreads);
    std::latch start(kThreads);
    std::vector<std::thread> readers;
    for (int t = 0; t < kThreads; ++t)
      readers.emplace_back([&, t] {
        Failures& mine = failures[static_cast<size_t>(t)];
        try {
          ts::LocalMode mode(kRanks);
          start.arrive_and_wait();
          read(shared_source, mine);
        } catch (const std::exception& e) {
          mine.push_back(std::string("threw: ") + e.what());
        }
      });
    for (std::thread& reader : readers) reader.join();
    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(round);
      CAPTURE(t);
      CHECK(failures[static_cast<size_t>(t)] == Failures{});
    }
  }
}

}  // namespace

TEST_CASE("concurrent reads of one plain tensor: replicas, shards and data_ptr from several threads") {
  const std::vector<float> all = halves(0, kElements);
  read_concurrently([&](const ts::Tensor& source, Failures& failures) {
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {kRanks});
    const ts::DTensor replicated = ts::distribute_tensor(source, mesh, {ts::Replicate()});
    const ts::DTensor sharded = ts::distribute_tensor(source, mesh, {ts::Shard(0)});
    const ts::DTensor wrapped = ts::from_local(source, mesh, {ts::Replicate()});
    const auto* address = static_cast<const float*>(source.data_ptr());
    if (source.data_ptr() != address) failures.push_back("data_ptr changed between two reads");
    if (std::vector<float>(address, address + kElements) != all)
      failures.push_back("the memory data_ptr names does not hold the source values");
    const int64_t part = kElements / kRanks;
    for (int r = 0; r < kRanks; ++r) {
      expect_values(replicated.to_local().shard(r), all, "rank " + std::to_string(r) + "'s replica",
                    failures);
      expect_values(wrapped.to_local().shard(r), all, "rank " + std::to_string(r) + "'s from_local shard",
                    failures);
      expect_values(sharded.to_local().shard(r), halves(r * part, (r + 1) * part),
                    "rank " + std::to_string(r) + "'s Shard(0) part", failures);
    }
  });
}

// Writable exports are made while other threads replicate the tensor and kernels read it: the
// first export of bytes the tensor shares moves it to a copy of its own under those readers (see
// Storage's comment on threads), who must still read the source values.
TEST_CASE("concurrent reads of one plain tensor: replicas, kernels and DLPack exports from several threads") {
  const std::vector<float> all = halves(0, kElements);
  read_concurrently([&](const ts::Tensor& source, Failures& failures) {
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {kRanks});
    const ts::DTensor wrapped = ts::from_local(source, mesh, {ts::Replicate()});
    const ts::DTensor sharded = ts::distribute_tensor(source, mesh, {ts::Shard(0)});
    DLManagedTensor* managed = ts::to_dlpack(source);
    const auto* exported = static_cast<const float*>(managed->dl_tensor.data);
    const ts::DTensor replicated = ts::distribute_tensor(source, mesh, {ts::Replicate()});
    if (source.data_ptr() != exported) failures.push_back("data_ptr is not the exported address");
    if (std::vector<float>(exported, exported + kElements) != all)
      failures.push_back("the exported memory does not hold the source values");
    managed->deleter(managed);
    for (int r = 0; r < kRanks; ++r) {
      expect_values(replicated.to_local().shard(r), all, "rank " + std::to_string(r) + "'s replica",
                    failures);
      expect_values(wrapped.to_local().shard(r), all, "rank " + std::to_string(r) + "'s from_local shard",
                    failures);
      expect_values(sharded.to_local().shard(r),
                    halves(r * (kElements / kRanks), (r + 1) * (kElements / kRanks)),
                    "rank " + std::to_string(r) + "'s Shard(0) part", failures);
    }
  });
}
