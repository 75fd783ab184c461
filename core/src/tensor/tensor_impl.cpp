#include "tensor/tensor_impl.hpp"

#include <cstddef>

#include <fmt/format.h>

#include "tensor/checked_arith.hpp"
#include "tensor/object_pool.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

// The lowest and highest element index (relative to the storage start) a non-empty view reaches.
struct ElementRange {
  int64_t lowest;
  int64_t highest;
};

ElementRange element_range(const Shape& sizes, const std::vector<int64_t>& strides, int64_t offset,
                           const char* op) {
  auto what = [&] {
    return fmt::format("{}: the elements of a view of shape {} with strides {} at offset {}", op,
                       shape_text(sizes), shape_text(strides), offset);
  };
  ElementRange range{offset, offset};
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t span = detail::checked_mul(sizes[d] - 1, strides[d], what);
    (span < 0 ? range.lowest : range.highest) =
        detail::checked_add(span < 0 ? range.lowest : range.highest, span, what);
  }
  return range;
}

// Throws unless every element of the view lies inside `storage` (see TensorImpl's invariant).
void check_fits_storage(const Storage& storage, DType dtype, const Shape& sizes,
                        const std::vector<int64_t>& strides, int64_t offset, const char* op) {
  const ElementRange range = element_range(sizes, strides, offset, op);
  const auto item = static_cast<int64_t>(itemsize(dtype));
  const auto available = static_cast<int64_t>(storage.bytes / itemsize(dtype));
  if (range.lowest < 0 || range.highest >= available)
    throw Error(fmt::format(
        "{}: a view of shape {} with strides {} at offset {} reaches elements {}..{}, outside its "
        "storage of {} elements ({} bytes of {}, {} bytes each)",
        op, shape_text(sizes), shape_text(strides), offset, range.lowest, range.highest, available,
        storage.bytes, dtype_name(dtype), item));
}

}  // namespace

std::vector<int64_t> contiguous_strides(const Shape& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride = detail::checked_mul(stride, std::max<int64_t>(sizes[d], 1), [&] {
      return fmt::format("the contiguous strides of shape {}", shape_text(sizes));
    });
  }
  return strides;
}

int64_t shape_numel(const Shape& sizes, const char* op) {
  // The product of the sizes with 0 taken as 1 must fit too: it is the largest contiguous stride,
  // and a shape's validity must not depend on where its zeros are.
  int64_t capacity = 1;
  bool empty = false;
  for (int64_t s : sizes) {
    if (s < 0) throw Error(fmt::format("{}: negative size {} in shape {}", op, s, shape_text(sizes)));
    empty = empty || s == 0;
    capacity = detail::checked_mul(capacity, std::max<int64_t>(s, 1), [&] {
      return fmt::format("{}: shape {} has too many elements", op, shape_text(sizes));
    });
  }
  return empty ? 0 : capacity;
}

size_t shape_bytes(const Shape& sizes, DType dtype, const char* op) {
  const int64_t numel = shape_numel(sizes, op);
  const int64_t bytes = detail::checked_mul(numel, static_cast<int64_t>(itemsize(dtype)), [&] {
    return fmt::format("{}: the byte size of shape {} of {}", op, shape_text(sizes), dtype_name(dtype));
  });
  return static_cast<size_t>(bytes);
}

int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t lo = ndim == 0 ? -1 : -ndim;
  const int64_t hi = ndim == 0 ? 0 : ndim - 1;
  if (dim < lo || dim > hi)
    throw Error(fmt::format("{}: dim {} is out of range for a tensor of {} dims (expected {}..{})", op, dim,
                            ndim, lo, hi));
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

std::string shape_text(const Shape& sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

namespace {

bool dense_row_major(const Shape& sizes, const std::vector<int64_t>& strides, int64_t numel) {
  if (numel == 0) return true;
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

}  // namespace

std::shared_ptr<const TensorImpl::Layout> TensorImpl::make_layout(Shape sizes, std::vector<int64_t> strides) {
  return object_pool::make_shared<Layout>(Layout{std::move(sizes), std::move(strides)});
}

TensorImpl::TensorImpl(std::shared_ptr<Storage> storage, DType dtype, Shape sizes,
                       std::vector<int64_t> strides, int64_t offset, const char* op)
    : storage_(std::move(storage)),
      dtype_(dtype),
      layout_(make_layout(std::move(sizes), std::move(strides))),
      offset_(offset),
      numel_(shape_numel(layout_->sizes, op)) {
  const Shape& sizes_now = layout_->sizes;
  const std::vector<int64_t>& strides_now = layout_->strides;
  if (static_cast<int64_t>(sizes_now.size()) > kMaxDims)
    throw Error(fmt::format("{}: a tensor may have at most {} dims, got {} (shape {})", op, kMaxDims,
                            sizes_now.size(), shape_text(sizes_now)));
  if (strides_now.size() != sizes_now.size())
    throw Error(fmt::format("internal: {}: shape {} has {} dims but strides {} have {}", op,
                            shape_text(sizes_now), sizes_now.size(), shape_text(strides_now),
                            strides_now.size()));
  // An empty view addresses no element, so its offset and strides may point anywhere.
  if (numel_ > 0) check_fits_storage(*storage_, dtype_, sizes_now, strides_now, offset_, op);
  contiguous_ = dense_row_major(sizes_now, strides_now, numel_);
}

std::shared_ptr<TensorImpl> TensorImpl::allocate(Shape sizes, DType dtype,
                                                 std::shared_ptr<const dispatch::Backend> backend) {
  if (static_cast<int64_t>(sizes.size()) > kMaxDims)
    throw Error(fmt::format("a tensor may have at most {} dims, got {} (shape {})", kMaxDims, sizes.size(),
                            shape_text(sizes)));
  const size_t bytes = shape_bytes(sizes, dtype, "allocate");
  const auto numel = static_cast<int64_t>(bytes / itemsize(dtype));
  auto storage = object_pool::make_shared<Storage>(std::move(backend), bytes);
  std::vector<int64_t> strides = contiguous_strides(sizes);
  return object_pool::make_shared<TensorImpl>(FreshKey(), std::move(storage), dtype, std::move(sizes),
                                              std::move(strides), numel);
}

TensorImpl::TensorImpl(FreshKey, std::shared_ptr<Storage> storage, DType dtype, Shape sizes,
                       std::vector<int64_t> strides, int64_t numel)
    : storage_(std::move(storage)),
      dtype_(dtype),
      layout_(make_layout(std::move(sizes), std::move(strides))),
      offset_(0),
      numel_(numel),
      contiguous_(dense_row_major(layout_->sizes, layout_->strides, numel_)) {}

TensorImpl::TensorImpl(FreshKey, std::shared_ptr<Storage> storage, const TensorImpl& view)
    : storage_(std::move(storage)),
      dtype_(view.dtype_),
      layout_(view.layout_),
      offset_(view.offset_),
      numel_(view.numel_),
      contiguous_(view.contiguous_) {}

std::shared_ptr<TensorImpl> TensorImpl::view(Shape sizes, std::vector<int64_t> strides, int64_t offset,
                                             const char* op) const {
  return object_pool::make_shared<TensorImpl>(storage_, dtype_, std::move(sizes), std::move(strides), offset,
                                              op);
}

namespace {

// From now on the bytes belong to a block of their own, which the backend frees when the last
// Storage holding them goes (each Storage's destructor then leaves them alone).
void mark_shared(Storage& original) {
  if (!original.shared)
    original.shared = std::shared_ptr<void>(
        original.data.load(), [backend = original.backend](void* bytes) { backend->deallocate(bytes); });
}

// A new Storage with a copy of `original`'s bytes (none on a shapes-only backend).
std::shared_ptr<Storage> copy_of(const Storage& original) {
  auto copy = object_pool::make_shared<Storage>(original.backend, original.bytes);
  if (copy->data != nullptr && original.data != nullptr)
    original.backend->copy(copy->data, original.data, original.bytes, TESSERA_COPY_DEVICE_TO_DEVICE);
  return copy;
}

}  // namespace

template <class Emit>
void Storage::replicate(Storage& original, size_t count, Emit&& emit) {
  if (original.released()) original.throw_released("replicate");
  const auto copies = [&] {
    for (size_t i = 0; i < count; ++i) emit(copy_of(original));
  };
  // Someone holds a pointer into the original's bytes and may write through it: the replicas must
  // not see that, so they get bytes of their own (`data` is final here: no lock needed to read it).
  if (original.exposure_.load(std::memory_order_acquire) == Exposure::private_bytes) return copies();
  // Readers on other threads may replicate or expose the same Storage: marking it shared, or
  // copying bytes an exposure may be moving, happens under its lock.
  const std::lock_guard hold(original.transition_);
  if (original.exposure_.load(std::memory_order_relaxed) != Exposure::none) return copies();
  mark_shared(original);
  for (size_t i = 0; i < count; ++i) emit(object_pool::make_shared<Storage>(SameBytes{}, original));
}

std::shared_ptr<Storage> Storage::replica_of(Storage& original) {
  std::shared_ptr<Storage> replica;
  replicate(original, 1, [&](std::shared_ptr<Storage> made) { replica = std::move(made); });
  return replica;
}

void Storage::replicas_of(Storage& original, size_t count, std::vector<std::shared_ptr<Storage>>& out) {
  replicate(original, count, [&](std::shared_ptr<Storage> made) { out.push_back(std::move(made)); });
}

bool Storage::share_bytes_of(Storage& original) {
  if (&original == this || (original.data == data && original.data != nullptr)) return true;
  // A pointer into these bytes is held: the caller copies instead. Released bytes are not traded
  // either: the caller's copy then reports them.
  if (exposed() || released() || original.released()) return false;
  const std::lock_guard hold(original.transition_);
  if (original.exposed()) return false;
  mark_shared(original);
  if (!shared) backend->deallocate(data);
  version.fetch_add(1, std::memory_order_relaxed);
  data = original.data.load();
  shared = original.shared;
  return true;
}

bool Storage::exchange_bytes_with(Storage& other) {
  if (exposed() || other.exposed() || released() || other.released()) return false;
  version.fetch_add(1, std::memory_order_relaxed);
  other.version.fetch_add(1, std::memory_order_relaxed);
  data = other.data.exchange(data.load());
  std::swap(shared, other.shared);
  return true;
}

void Storage::make_private() {
  // Bytes exposed as private are this Storage's alone by construction (nobody comes to share them),
  // so another holder of `shared` is not a Storage (a producer's owner block, a collective keeping
  // a block alive) and they stay where the handed-out pointers point.
  if (!shares_bytes_for_writing() || exposure_.load(std::memory_order_relaxed) == Exposure::private_bytes)
    return;
  copy_to_private_bytes();
}

void Storage::copy_to_private_bytes() {
  // A shapes-only backend has no bytes to copy (data is null): only the sharing ends.
  void* own = data == nullptr ? nullptr : backend->allocate(bytes);
  if (own != nullptr) backend->copy(own, data, bytes, TESSERA_COPY_DEVICE_TO_DEVICE);
  // The other holders keep the old bytes. A reader on another thread during the first hand-out
  // may still be reading them: kept while this Storage lives.
  if (exposure_.load(std::memory_order_relaxed) != Exposure::none) left_behind_ = std::move(shared);
  shared.reset();
  data = own;
}

void* Storage::expose_writable() {
  if (released()) throw_released("hand out the address of");
  if (exposure_.load(std::memory_order_acquire) == Exposure::private_bytes) return data;
  const std::lock_guard hold(transition_);
  if (exposure_.load(std::memory_order_relaxed) != Exposure::private_bytes) {
    // Marked first, so the bytes this Storage leaves behind are kept (copy_to_private_bytes).
    exposure_.store(Exposure::shared_bytes, std::memory_order_relaxed);
    if (shares_bytes_for_writing()) copy_to_private_bytes();
    exposure_.store(Exposure::private_bytes, std::memory_order_release);
  }
  return data;
}

std::shared_ptr<TensorImpl> TensorImpl::replica() const {
  // This view's layout, already checked against bytes of the same size: not checked again (a
  // replica is made per rank of every shared result).
  return object_pool::make_shared<TensorImpl>(FreshKey(), Storage::replica_of(*storage_), *this);
}

void TensorImpl::replicas(size_t count, std::vector<std::shared_ptr<TensorImpl>>& out) const {
  std::vector<std::shared_ptr<Storage>> storages;
  storages.reserve(count);
  Storage::replicas_of(*storage_, count, storages);
  for (std::shared_ptr<Storage>& storage : storages)
    out.push_back(object_pool::make_shared<TensorImpl>(FreshKey(), std::move(storage), *this));
}

}  // namespace tessera
