// The per-thread pool of small blocks that TensorImpls and Storages come from
// (core/src/tensor/object_pool.hpp): a freed block is handed out again on the thread that freed it,
// never beyond the per-class bound, other threads keep pools of their own, larger sizes bypass it,
// and tensors made from it stay independent (a replica shares only its view's fixed layout).
#include <doctest/doctest.h>

#include <set>
#include <tessera/tessera.hpp>
#include <thread>
#include <vector>

#include "tensor/object_pool.hpp"
#include "tensor/tensor_impl.hpp"

namespace ts = tessera;
namespace pool = tessera::object_pool;

TEST_CASE("a block given back is handed out again on the same thread, by size class") {
  static_assert(pool::kGranule == 16, "the sizes below share a class of 16 bytes");
  void* a = pool::take(100);  // the class of 97..112 bytes
  const size_t before = pool::pooled(100);
  pool::give_back(a, 100);
  CHECK(pool::pooled(100) == before + 1);
  CHECK(pool::pooled(112) == before + 1);  // the same class
  void* b = pool::take(112);
  CHECK(b == a);
  CHECK(pool::pooled(100) == before);
  pool::give_back(b, 128);
  // Another class does not hand it out.
  void* c = pool::take(40);
  CHECK(c != a);
  pool::give_back(c, 40);
}

TEST_CASE("a thread keeps at most the per-class bound of free blocks, the rest go back to the heap") {
  constexpr size_t bytes = pool::kLargest;  // the class with the fewest blocks
  const size_t bound = pool::kBytesPerClass / bytes;
  std::vector<void*> blocks;
  for (size_t i = 0; i < bound + 10; ++i) blocks.push_back(pool::take(bytes));
  for (void* block : blocks) pool::give_back(block, bytes);
  CHECK(pool::pooled(bytes) == bound);
  // Drained again, the pool hands out what it kept and then new blocks: every one distinct.
  std::set<void*> seen;
  blocks.clear();
  for (size_t i = 0; i < bound + 10; ++i) {
    blocks.push_back(pool::take(bytes));
    seen.insert(blocks.back());
  }
  CHECK(seen.size() == bound + 10);
  CHECK(pool::pooled(bytes) == 0);
  for (void* block : blocks) pool::give_back(block, bytes);
}

TEST_CASE("sizes above the largest class bypass the pool") {
  const size_t before = pool::pooled(pool::kLargest + 1);
  void* big = pool::take(pool::kLargest + 1);
  pool::give_back(big, pool::kLargest + 1);
  CHECK(pool::pooled(pool::kLargest + 1) == before);
  CHECK(before == 0);
}

TEST_CASE("each thread has a pool of its own, and a block freed on another thread joins that one") {
  void* mine = pool::take(64);
  const size_t here = pool::pooled(64);
  size_t there_before = 0, there_after = 0;
  void* taken_there = nullptr;
  std::thread other([&] {
    there_before = pool::pooled(64);
    pool::give_back(mine, 64);  // made here, freed there
    there_after = pool::pooled(64);
    taken_there = pool::take(64);
    pool::give_back(taken_there, 64);
  });  // the thread's pool is freed at its exit (LeakSanitizer would report what was not)
  other.join();
  CHECK(there_before == 0);
  CHECK(there_after == 1);
  CHECK(taken_there == mine);
  CHECK(pool::pooled(64) == here);  // this thread's pool did not change
}

TEST_CASE(
    "tensors from pooled blocks are independent: a replica has its own storage and shares its view's "
    "layout") {
  std::vector<ts::Tensor> made;
  for (int i = 0; i < 200; ++i) {
    // Made and dropped in turns, so later tensors reuse earlier ones' blocks.
    ts::Tensor t = ts::full({3}, static_cast<float>(i));
    if (i % 2 == 0) made.push_back(t);
  }
  for (size_t k = 0; k < made.size(); ++k)
    CHECK(made[k].to_vector<float>() == std::vector<float>(3, static_cast<float>(2 * k)));
  const ts::Tensor base = ts::arange(6).to(ts::kFloat32).reshape({2, 3});
  const std::shared_ptr<ts::TensorImpl> replica = base.impl()->replica();
  CHECK(replica.get() != base.impl().get());
  CHECK(replica->storage() != base.impl()->storage());
  CHECK(replica->sizes() == ts::Shape{2, 3});
  CHECK(&replica->sizes() == &base.impl()->sizes());              // one layout for both: nothing copied
  const ts::Tensor flat_view = ts::Tensor(replica).reshape({6});  // a view makes its own
  CHECK(flat_view.sizes() == ts::Shape{6});
  CHECK(replica->sizes() == ts::Shape{2, 3});
  ts::Tensor(replica).fill_(7.f);  // copy-on-write: the original keeps its values
  CHECK(base.to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(ts::Tensor(replica).to_vector<float>() == std::vector<float>(6, 7.f));
}
