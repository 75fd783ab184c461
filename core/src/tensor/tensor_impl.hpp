// What a Tensor handle points to: a strided view of one Storage on one backend.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "autograd/meta.hpp"
#include "dispatch/backend.hpp"
#include "tensor/memory_accounting.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// One allocation on one backend, freed by that backend when the last view of it is gone.
//
// Bytes may be shared copy-on-write between Storages (shared replicas: ranks that hold identical
// shards hold one buffer). A Storage is one rank's identity for its bytes: every view of a rank's
// shard holds the same Storage, so when a write through any of them first makes the bytes private
// (make_private), all of that rank's views see the private copy and no other rank sees the write.
// While nobody outside knows where the bytes are, a Storage may also trade them wholesale
// (exchange_bytes_with, share_bytes_of): an in-place collective lands its result that way.
//
// Exposure: once the address has been handed out (Tensor::data_ptr, to_dlpack and the Python
// exports built on it; bytes imported from a producer are exposed from the start), someone holds a
// pointer into these bytes, so from then on
//   - nothing swaps or replaces them: exchange_bytes_with and share_bytes_of return false, and an
//     in-place op copies its result into them, so a pointer taken before it sees the result;
//   - no other Storage comes to share them: replica_of copies, so a write through the pointer can
//     never reach another rank's replica;
//   - every hand-out (expose_writable: data_ptr, to_dlpack) first gives this Storage private bytes,
//     so the address never changes again and a consumer's writes reach this rank's views and nobody
//     else's. (Tensor::current_address tells where the bytes are without exposing them: how tests
//     see that replicas share one buffer.)
// The bytes a Storage leaves behind once exposed are kept until it goes, so no pointer into them
// dangles.
//
// Threads: reading one tensor from several threads at once is safe. The changes readers make here
// (replica_of marking the bytes shared, the exposures) hold `transition_`, a one-byte lock;
// writers (prepare_write, make_private, exchange_bytes_with, share_bytes_of into this Storage) need
// the tensor to themselves, as every write does, so the write path takes no lock. One change of
// `data` can meet an unlocked reader: the first hand-out of bytes another Storage shares moves
// this Storage to a copy while a kernel on another thread may be reading the old bytes; `data` is
// atomic and the old bytes stay alive and unchanged (kept, see above), so that reader still reads
// the right values.
//
// Memory counters (tensor/memory_accounting.hpp): a Storage made while one watches its world
// carries a record of its bytes, which the destructor closes. One atomic load when none watches.
//
// Released bytes (tensor/storage_release.hpp): a Storage may drop its bytes while its views stay
// valid (FSDP frees a sharded parameter's gathered bytes between uses) and get new ones later;
// meanwhile `data` is null and released() is true, and any read or write of the bytes is an Error.
struct Storage {
  Storage(std::shared_ptr<const dispatch::Backend> owner, size_t size_in_bytes)
      : backend(std::move(owner)),
        data(backend->allocate(size_in_bytes)),
        bytes(size_in_bytes),
        memory(detail::memory_watched() ? detail::memory_made(size_in_bytes) : nullptr) {}
  ~Storage() {
    // Shared bytes are freed with their last holder; released ones are gone already.
    if (!shared && !released()) backend->deallocate(data);
    if (MemoryRecord* record = memory.load(std::memory_order_relaxed)) detail::memory_gone(record);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // A new Storage holding the same bytes as `original` until either is written; a copy of them when
  // `original` is exposed. Safe while other threads read `original`.
  static std::shared_ptr<Storage> replica_of(Storage& original);
  // `count` replicas of `original` appended to `out`: replica_of's result each, with its lock and
  // checks taken once for all of them (one op's result is replicated to every other rank).
  static void replicas_of(Storage& original, size_t count, std::vector<std::shared_ptr<Storage>>& out);
  // Lets go of this Storage's bytes and holds `original`'s instead, shared until either is written:
  // replica_of without a new Storage, for a Storage whose views must see the new bytes. Returns
  // false and changes nothing when either is exposed (the caller copies instead).
  bool share_bytes_of(Storage& original);
  // Trades bytes (and who owns them) with `other`; any third Storage sharing either's old bytes
  // keeps them. Returns false and changes nothing when either is exposed.
  bool exchange_bytes_with(Storage& other);
  // Whether another Storage holds these bytes (then a write must first make them private).
  bool shares_bytes() const { return shared != nullptr && shared.use_count() > 1; }
  // shares_bytes() for a writer deciding whether to copy first. It copies the handle, an atomic
  // read-modify-write of the holders' count: unlike use_count() alone (a relaxed load), that
  // synchronizes with the release of another Storage that copied the bytes out and let them go,
  // so its reads of the bytes happen before this one's writes.
  bool shares_bytes_for_writing() const {
    if (shared == nullptr) return false;
    const std::shared_ptr<void> probe = shared;
    return probe.use_count() > 2;  // beyond this Storage and the probe
  }
  // Gives this Storage its own copy of bytes it shares; all its views keep working on the copy.
  void make_private();

  // Hand out the address of the bytes (see Exposure above); safe while other threads read. Return
  // `data` as it stands once exposed.
  void* expose_writable();
  bool exposed() const { return exposure_.load(std::memory_order_acquire) != Exposure::none; }

  std::shared_ptr<const dispatch::Backend> backend;
  // Atomic because the first hand-out of shared bytes (expose_writable) moves a tensor that other
  // threads may be reading to a copy of its own: they load either address, both valid and holding
  // the same values (the old bytes are kept). A load is a plain move on x86 and AArch64.
  std::atomic<void*> data;
  size_t bytes;
  // Set once the bytes are shared: owns them (the backend frees them when the last holder goes).
  std::shared_ptr<void> shared;
  // How many writes went through any view of this rank's bytes: autograd compares it with the
  // version a value was saved at to refuse values overwritten in place (PyTorch: _version).
  std::atomic<int64_t> version{0};
  // The memory counters' record of these bytes; null when none watched as they were made.
  using MemoryRecord = detail::MemoryRecord;
  std::atomic<MemoryRecord*> memory{nullptr};

  // Whether the bytes were released (storage_release.hpp) and not restored since.
  bool released() const { return released_.load(std::memory_order_acquire); }
  // Throws Error naming `what` was asked of bytes that were released; cold, so callers test
  // released() (or a null `data`) first.
  [[noreturn]] void throw_released(const char* what) const;
  // Drops the bytes (a copy-on-write share is let go, own bytes freed); refused once exposed.
  void release_bytes();
  // New bytes for a released Storage; the caller fills them.
  void restore_bytes();

  // Bytes allocated by someone else (from_dlpack): `owner` gives them back when the last Storage
  // holding them goes; the backend never frees them. Their producer knows the address: exposed.
  struct ForeignBytes {};
  Storage(ForeignBytes, std::shared_ptr<const dispatch::Backend> on, void* bytes_at, size_t size,
          std::shared_ptr<void> owner)
      : backend(std::move(on)),
        data(bytes_at),
        bytes(size),
        shared(std::move(owner)),
        memory(detail::memory_watched() ? detail::memory_made(size) : nullptr),
        exposure_(Exposure::private_bytes) {}

  // replica_of's constructor: the same bytes, already owned by `original.shared`.
  struct SameBytes {};
  Storage(SameBytes, const Storage& original)
      : backend(original.backend),
        data(original.data.load()),
        bytes(original.bytes),
        shared(original.shared),
        memory(detail::memory_watched() ? detail::memory_made(original.bytes, /*replica=*/true) : nullptr) {}

 private:
  // replica_of and replicas_of: `count` replicas of `original`, each handed to emit(shared_ptr).
  template <class Emit>
  static void replicate(Storage& original, size_t count, Emit&& emit);

  // How far the address has been handed out. `private_bytes` is final: `data` never changes again.
  enum class Exposure : uint8_t {
    none,
    shared_bytes,   // being given private bytes: the shared ones it leaves behind are kept
    private_bytes,  // the bytes are this Storage's alone, for good
  };
  // A lock for the transitions readers make; a waiter sleeps on the flag (C++20 atomic wait)
  // rather than spin through a copy.
  class TransitionLock {
   public:
    void lock() {
      while (held_.test_and_set(std::memory_order_acquire)) held_.wait(true, std::memory_order_relaxed);
    }
    void unlock() {
      held_.clear(std::memory_order_release);
      held_.notify_one();
    }

   private:
    std::atomic_flag held_;
  };
  void copy_to_private_bytes();  // make_private's copy; keeps the old bytes alive when exposed

  std::atomic<Exposure> exposure_{Exposure::none};
  std::atomic<bool> released_{false};
  TransitionLock transition_;
  // The shared bytes an exposed Storage left behind: a pointer handed out may still point there.
  std::shared_ptr<void> left_behind_;
};

// Invariant, checked on construction: sizes are non-negative, their product fits int64 (as does the
// product with every 0 taken as 1, so contiguous strides never overflow), and every element the
// view can address lies inside its storage. Breaking it is a tessera::Error naming `op`.
class TensorImpl {
 public:
  TensorImpl(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, std::vector<int64_t> strides,
             int64_t offset, const char* op = "tensor");

  // allocate's and replica's constructor (only they can make the key): a layout already checked
  // against bytes of this size (a fresh contiguous one, or the view a replica copies).
  class FreshKey {
    FreshKey() = default;
    friend class TensorImpl;
  };
  TensorImpl(FreshKey, std::shared_ptr<Storage> storage, DType dtype, Shape sizes,
             std::vector<int64_t> strides, int64_t numel);
  // replica's: `view`'s layout (shared, not copied) over other bytes of the same size.
  TensorImpl(FreshKey, std::shared_ptr<Storage> storage, const TensorImpl& view);

  // A fresh contiguous tensor; its elements are uninitialised.
  static std::shared_ptr<TensorImpl> allocate(Shape sizes, DType dtype,
                                              std::shared_ptr<const dispatch::Backend> backend);
  // A view of the same storage with other sizes, strides and element offset; `op` names the view
  // in the error thrown when the layout reaches outside the storage.
  std::shared_ptr<TensorImpl> view(Shape sizes, std::vector<int64_t> strides, int64_t offset,
                                   const char* op = "view") const;
  // The same view of the same bytes, held by a Storage of its own (Storage::replica_of): another
  // rank's identical shard, sharing memory until one of them is written.
  std::shared_ptr<TensorImpl> replica() const;
  // `count` replicas, as many calls of replica() would make, appended to `out`.
  void replicas(size_t count, std::vector<std::shared_ptr<TensorImpl>>& out) const;
  // Called before anything writes through this view: bytes shared with another Storage are copied
  // first (copy-on-write). Cheap when they are not shared.
  // Every write counts as a new version of the bytes (see Storage::version).
  void prepare_write() const {
    storage_->version.fetch_add(1, std::memory_order_relaxed);
    if (storage_->shared) storage_->make_private();
  }

  const std::shared_ptr<Storage>& storage() const { return storage_; }
  // Where element `element` of this view lies, counted in elements from its offset (for a dense
  // view: its element `element`); null when the storage has no bytes (a shapes-only backend).
  // Throws Error when the bytes were released (storage_release.hpp).
  std::byte* bytes_at(int64_t element = 0) const {
    auto* base = static_cast<std::byte*>(storage_->data.load());
    if (base == nullptr) {
      if (storage_->released()) throw_released("read or write");
      return nullptr;
    }
    return base + (offset_ + element) * static_cast<int64_t>(itemsize(dtype_));
  }
  // Throws Error naming what was asked (`what`) of this view's released bytes, with its shape.
  [[noreturn]] void throw_released(const char* what) const;
  const dispatch::Backend& backend() const { return *storage_->backend; }
  const std::shared_ptr<const dispatch::Backend>& backend_ptr() const { return storage_->backend; }
  DType dtype() const { return dtype_; }
  const Shape& sizes() const { return layout_->sizes; }
  // Whether `other` holds this very layout object (replicas of one result share it): then their
  // sizes and strides are equal, known without comparing them.
  bool shares_layout_with(const TensorImpl& other) const { return layout_ == other.layout_; }
  const std::vector<int64_t>& strides() const { return layout_->strides; }
  int64_t offset() const { return offset_; }
  int64_t numel() const { return numel_; }
  int64_t dim() const { return static_cast<int64_t>(layout_->sizes.size()); }
  // Row-major and dense (size-1 dims may have any stride); known from construction, as a view's
  // sizes and strides never change.
  bool is_contiguous() const { return contiguous_; }
  // This tensor's autograd state (see autograd/meta.hpp).
  const autograd::AutogradSlot& autograd() const { return autograd_; }

 private:
  // A view's sizes and strides, fixed once made. Replicas (an identical shard per rank) share one
  // instead of copying two vectors each: two heap blocks fewer per rank of a replicated result.
  struct Layout {
    Shape sizes;
    std::vector<int64_t> strides;
  };
  static std::shared_ptr<const Layout> make_layout(Shape sizes, std::vector<int64_t> strides);

  std::shared_ptr<Storage> storage_;
  DType dtype_;
  std::shared_ptr<const Layout> layout_;
  int64_t offset_;
  int64_t numel_;
  bool contiguous_;  // asked on every kernel call and collective: computed once
  autograd::AutogradSlot autograd_;
};

// Row-major strides for `sizes` (a shape shape_numel accepts).
std::vector<int64_t> contiguous_strides(const Shape& sizes);
// The number of elements of `sizes`; throws when a size is negative or the sizes multiply past
// int64 (see TensorImpl's invariant). `op` prefixes the message.
int64_t shape_numel(const Shape& sizes, const char* op = "shape");
// The bytes a contiguous tensor of `sizes` and `dtype` needs; throws when they do not fit ptrdiff_t.
size_t shape_bytes(const Shape& sizes, DType dtype, const char* op = "shape");
// Normalises a possibly negative dim against `ndim` dims; throws naming the op when out of range.
int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op);
std::string shape_text(const Shape& sizes);

// The largest number of dims a tensor may have.
inline constexpr int64_t kMaxDims = 16;

}  // namespace tessera
