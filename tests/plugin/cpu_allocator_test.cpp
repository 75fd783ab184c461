// The CPU backend's host allocator (plugins/backend-cpu/caching_allocator.cpp), compiled into this
// suite: blocks are aligned, never overlap while alive, keep what is written to them, are recycled
// per thread, and none leak when threads that freed them exit (LeakSanitizer checks that under the
// asan preset).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "caching_allocator.hpp"
#include "slab_blocks.hpp"

namespace {

struct Block {
  unsigned char* data;
  size_t bytes;
};

Block allocate(size_t bytes) {
  void* out = nullptr;
  tessera_error error{};
  error.struct_size = sizeof(error);
  REQUIRE(tessera::cpu::cached_alloc(nullptr, bytes, &out, &error) == TESSERA_OK);
  REQUIRE(out != nullptr);
  return {static_cast<unsigned char*>(out), bytes};
}

void release(const Block& block) { tessera::cpu::cached_free(nullptr, block.data); }

// Sizes around every boundary: the 64-byte unit, small classes, the 64 KiB small limit, 1 MiB.
const std::vector<size_t> kSizes = {0,    1,    63,    64,    65,    127,    128,     1000,
                                    4096, 4097, 65535, 65536, 65537, 100000, 1 << 20, (1 << 20) + 1};

}  // namespace

TEST_CASE("cpu allocator: live blocks are 64-byte aligned, disjoint and keep their contents") {
  std::vector<Block> live;
  for (int round = 0; round < 3; ++round)
    for (size_t bytes : kSizes) live.push_back(allocate(bytes));
  for (size_t i = 0; i < live.size(); ++i) {
    CHECK(reinterpret_cast<uintptr_t>(live[i].data) % 64 == 0);
    std::memset(live[i].data, static_cast<int>(i % 251), live[i].bytes);
  }
  std::vector<Block> sorted = live;
  std::sort(sorted.begin(), sorted.end(), [](const Block& a, const Block& b) { return a.data < b.data; });
  for (size_t i = 1; i < sorted.size(); ++i)
    CHECK(sorted[i - 1].data + sorted[i - 1].bytes <= sorted[i].data);
  for (size_t i = 0; i < live.size(); ++i) {
    const auto expected = static_cast<unsigned char>(i % 251);
    CHECK(std::all_of(live[i].data, live[i].data + live[i].bytes,
                      [&](unsigned char c) { return c == expected; }));
  }
  for (const Block& b : live) release(b);
}

TEST_CASE("cpu allocator: a small block freed on a thread is handed out again on that thread") {
  const Block first = allocate(300);
  unsigned char* const address = first.data;
  release(first);
  const Block again = allocate(400);  // same 512-byte class
  CHECK(again.data == address);
  const Block other = allocate(300);  // the class's free list is empty again: a new block
  CHECK(other.data != address);
  release(again);
  release(other);
}

TEST_CASE(
    "cpu allocator: a freed block above the small limit is handed out again for its size, from any thread") {
  // 150000 bytes is between the 64 KiB small limit and 1 MiB: such blocks (the staging areas of a
  // collective over a few thousand ranks) once went back to malloc on every free. Sizes no other
  // case allocates: the cache is process-wide, and a block another case freed would be handed out.
  for (size_t bytes : {size_t{150000}, size_t{(1 << 20) + 8193}}) {
    CAPTURE(bytes);
    const Block first = allocate(bytes);
    unsigned char* const address = first.data;
    std::thread([&] { release(first); }).join();  // the cache is shared by all threads
    const Block again = allocate(bytes);
    CHECK(again.data == address);
    const Block other = allocate(bytes);  // that one is taken: a new block
    CHECK(other.data != address);
    release(again);
    const Block bigger = allocate(bytes + 4096);  // blocks are matched by exact size: never a smaller one
    CHECK(bigger.data != address);
    release(other);
    release(bigger);
  }
}

TEST_CASE("cpu allocator: more frees than a thread keeps, and blocks freed by other threads, do not leak") {
  std::vector<Block> blocks;
  for (int i = 0; i < 200; ++i) blocks.push_back(allocate(static_cast<size_t>(64 + (i % 7) * 1000)));
  // 40 blocks of the 64 KiB class, freed here below: more than the 16 a thread keeps of that class.
  for (int i = 0; i < 40; ++i) blocks.push_back(allocate(60000));
  // Half are freed by two short-lived threads (their caches are emptied when they exit), the rest here.
  std::thread a([&] {
    for (size_t i = 0; i < 50; ++i) release(blocks[i]);
  });
  std::thread b([&] {
    for (size_t i = 50; i < 100; ++i) release(blocks[i]);
    for (int i = 0; i < 40; ++i) release(allocate(256));  // allocate and free within the thread too
  });
  a.join();
  b.join();
  for (size_t i = 100; i < blocks.size(); ++i) release(blocks[i]);
}

TEST_CASE("cpu allocator: an impossible size is refused with a message, not wrapped to a small block") {
  void* out = reinterpret_cast<void*>(1);
  tessera_error error{};
  error.struct_size = sizeof(error);
  CHECK(tessera::cpu::cached_alloc(nullptr, SIZE_MAX - 16, &out, &error) == TESSERA_OUT_OF_MEMORY);
  CHECK(out == nullptr);
  CHECK(std::string(error.message).find("does not fit") != std::string::npos);
}

// Slabs (plugins/backend-cpu/slab_blocks.hpp): what a thread's lists cannot keep goes back to its
// slab, not to free(); a block another thread frees returns to the same slab; a slab whose blocks
// are all free is given back to the heap (one is kept). Sizes no other case here allocates, so the
// counts are this case's own (slabs are process-wide).
TEST_CASE(
    "cpu allocator: small blocks beyond a thread's lists return to their slabs, and empty slabs are "
    "released") {
  namespace slabs = tessera::cpu::slab_blocks;
  // 2 KiB blocks: a thread keeps 256 (512 KiB) of them; 31 fit in one 64 KiB slab.
  constexpr size_t kBytes = 2000, kClass = 2048, kPerSlab = (slabs::kSlabBytes - 64) / (64 + kClass);
  const size_t before = slabs::slabs_held(kClass);
  std::vector<Block> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(allocate(kBytes));
  const size_t needed = (1000 + kPerSlab - 1) / kPerSlab;
  CHECK(slabs::slabs_held(kClass) >= before + needed - 1);  // the kept spare may have served one
  CHECK(slabs::slabs_held(kClass) <= before + needed + 1);
  // Every block lies in one 64 KiB-aligned slab with its header: no block straddles two.
  for (const Block& b : blocks) {
    const auto at = reinterpret_cast<uintptr_t>(b.data);
    CHECK((at - 64) / slabs::kSlabBytes == (at + kClass - 1) / slabs::kSlabBytes);
  }
  for (size_t i = 0; i < blocks.size(); ++i) std::memset(blocks[i].data, static_cast<int>(i % 253), kBytes);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto expected = static_cast<unsigned char>(i % 253);
    CHECK(
        std::all_of(blocks[i].data, blocks[i].data + kBytes, [&](unsigned char c) { return c == expected; }));
  }
  // Half freed on another thread (its lists keep 256 and give those to the slabs when it exits), half here.
  std::thread([&] {
    for (size_t i = 0; i < 500; ++i) release(blocks[i]);
  }).join();
  for (size_t i = 500; i < blocks.size(); ++i) release(blocks[i]);
  // This thread keeps at most 256 blocks: at most 256 / 31 + 1 slabs stay partly used, and one empty spare.
  CHECK(slabs::slabs_held(kClass) <= before + 256 / kPerSlab + 3);
  // A block freed beyond the lists goes back to its slab and is handed out again from there.
  std::vector<Block> again;
  for (int i = 0; i < 600; ++i) again.push_back(allocate(kBytes));
  for (const Block& b : again) std::memset(b.data, 0x5a, kBytes);
  std::sort(again.begin(), again.end(), [](const Block& a, const Block& b) { return a.data < b.data; });
  for (size_t i = 1; i < again.size(); ++i) CHECK(again[i - 1].data + kClass <= again[i].data);
  for (const Block& b : again) release(b);
}

TEST_CASE("cpu allocator: slab blocks taken and freed by many threads at once stay whole") {
  // Each thread takes, writes, checks and frees blocks of two slab classes; any thread's free may
  // land on a slab another thread took from.
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  std::vector<std::vector<Block>> handed(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &bad, &handed] {
      for (int round = 0; round < 20; ++round) {
        std::vector<Block> mine;
        for (int i = 0; i < 300; ++i) mine.push_back(allocate(i % 2 == 0 ? 100 : 1000));
        for (size_t i = 0; i < mine.size(); ++i)
          std::memset(mine[i].data, t * 16 + round % 16, mine[i].bytes);
        for (const Block& b : mine)
          bad[t] += std::count_if(b.data, b.data + b.bytes,
                                  [&](unsigned char c) { return c != t * 16 + round % 16; });
        // Half freed here; the other half handed to the next thread's list, freed there next round.
        for (size_t i = 0; i < mine.size(); ++i)
          if (i % 2 == 0) release(mine[i]);
        std::vector<Block> passed;
        for (size_t i = 1; i < mine.size(); i += 2) passed.push_back(mine[i]);
        handed[t].insert(handed[t].end(), passed.begin(), passed.end());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) CHECK(bad[t] == 0);
  std::vector<std::thread> freers;
  for (int t = 0; t < 4; ++t)
    freers.emplace_back([&handed, t] {
      for (const Block& b : handed[(t + 1) % 4]) release(b);
    });
  for (auto& thread : freers) thread.join();
}

TEST_CASE(
    "cpu allocator: a size above PTRDIFF_MAX is refused as out of memory before any rounding or allocation") {
  void* out = reinterpret_cast<void*>(1);
  tessera_error error{};
  error.struct_size = sizeof(error);
  CHECK(tessera::cpu::cached_alloc(nullptr, (SIZE_MAX >> 1) + 2, &out, &error) == TESSERA_OUT_OF_MEMORY);
  CHECK(out == nullptr);
  CHECK(std::string(error.message).find("PTRDIFF_MAX") != std::string::npos);
}
