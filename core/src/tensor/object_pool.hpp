// Memory for the small objects an op makes once per rank: a TensorImpl (with its shared_ptr control
// block) and a Storage. A 64-rank op makes and frees 64 of each, more than glibc's per-thread cache
// holds (seven per size), so most went through malloc's slow path and its consolidation: about
// 200 instructions each, a fifth of a rank's share of a small op. Here each thread keeps the blocks
// it frees by size class and hands them out again; a block freed on another thread joins that
// thread's lists (every block comes from ::operator new, so any thread may free it).
//
// Nothing in a pooled block is read before it is constructed again, so no thread or world can see
// another's data through it. Under AddressSanitizer a pooled block is poisoned (but for the link
// to the next one): a use after free still reports.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace tessera::object_pool {

// Blocks up to this size are pooled, in classes of kGranule bytes: as fine as malloc's, since a
// coarser class (64 bytes) made a Storage's 72-byte block 128 and a 4096-rank collective over
// such tensors 30-90% slower from the extra cache lines.
constexpr size_t kGranule = 16;
constexpr size_t kLargest = 512;
// A thread keeps at most this many bytes of free blocks per class (the rest go back to the heap).
constexpr size_t kBytesPerClass = size_t{256} << 10;

// A block of at least `bytes`, aligned as ::operator new aligns (larger sizes: the heap's).
void* take(size_t bytes);
// A block from take(bytes), for reuse.
void give_back(void* block, size_t bytes) noexcept;
// The calling thread's free blocks of the class of `bytes` (for tests).
size_t pooled(size_t bytes);

// An allocator for allocate_shared: single objects of a pooled size come from the pool.
template <class T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U>&) noexcept {}  // NOLINT: rebinding, as allocators convert
  T* allocate(size_t n) {
    if (n == 1 && sizeof(T) <= kLargest && alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__)
      return static_cast<T*>(take(sizeof(T)));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1 && sizeof(T) <= kLargest && alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__)
      return give_back(p, sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const Allocator<U>&) const noexcept {
    return true;
  }
};

// std::make_shared<T>(args...) with T and its control block in one pooled block.
template <class T, class... Args>
std::shared_ptr<T> make_shared(Args&&... args) {
  return std::allocate_shared<T>(Allocator<T>(), std::forward<Args>(args)...);
}

}  // namespace tessera::object_pool
