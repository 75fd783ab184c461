// release_storage, restore_storage and the Storage transitions under them.
#include "tensor/storage_release.hpp"

#include <fmt/format.h>

#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {

void Storage::throw_released(const char* what) const {
  throw Error(
      fmt::format("cannot {} {} bytes that were released (release_storage, as FSDP does between uses) and "
                  "not restored since; restore_storage gives a released tensor its values back",
                  what, bytes));
}

void TensorImpl::throw_released(const char* what) const {
  throw Error(
      fmt::format("cannot {} a tensor of shape {} ({}): its {} bytes were released (release_storage, as FSDP "
                  "does between uses) and not restored since; restore_storage gives it its values back",
                  what, shape_text(sizes()), dtype_name(dtype()), storage_->bytes));
}

void Storage::release_bytes() {
  if (released()) return;
  if (exposed())
    throw Error(
        fmt::format("release_storage: the address of these {} bytes was handed out (data_ptr or to_dlpack), "
                    "so freeing them would leave that pointer dangling; release a tensor whose address "
                    "nobody holds",
                    bytes));
  // Bytes shared copy-on-write stay with their other holders; bytes of this Storage's own go back.
  if (shared)
    shared.reset();
  else if (data != nullptr)
    backend->deallocate(data);
  data = nullptr;
  released_.store(true, std::memory_order_release);
  detail::memory_present(*this, false);
}

void Storage::restore_bytes() {
  if (!released()) return;
  data = backend->allocate(bytes);
  released_.store(false, std::memory_order_release);
  detail::memory_present(*this, true);
}

namespace {

const char* kind_of(const Tensor& t) { return t.is_local() ? "local" : "dense"; }

void check_defined(const Tensor& t, const char* op, const char* which) {
  if (!t.defined()) throw Error(fmt::format("{}: {} is an undefined tensor", op, which));
}

// The dense tensors that make `t` up, with their ranks (-1 for a dense tensor).
std::vector<std::pair<int, Tensor>> pieces_of(const Tensor& t) {
  if (!t.is_local()) return {{-1, t}};
  std::vector<std::pair<int, Tensor>> pieces;
  for (const auto& [rank, shard] : t.shards()) pieces.emplace_back(rank, shard);
  return pieces;
}

std::string where(int rank) { return rank < 0 ? std::string() : fmt::format(" (rank {})", rank); }

// Throws unless `values` can be restored into `t`: everything checked before anything changes.
void check_restorable(const Tensor& t, const Tensor& values) {
  check_defined(t, "restore_storage", "the tensor");
  check_defined(values, "restore_storage", "the values");
  if (t.is_local() != values.is_local())
    throw Error(fmt::format(
        "restore_storage: the tensor is {} but the values are {}; both must be dense or both local",
        kind_of(t), kind_of(values)));
  if (t.dtype() != values.dtype())
    throw Error(
        fmt::format("restore_storage: the tensor is {} but the values are {}; they must have the same dtype",
                    dtype_name(t.dtype()), dtype_name(values.dtype())));
  if (t.is_local() && t.ranks() != values.ranks())
    throw Error(
        fmt::format("restore_storage: the tensor is local over ranks {} but the values over ranks {}; they "
                    "must cover the same ranks",
                    t.ranks().to_string(), values.ranks().to_string()));
  for (const auto& [rank, piece] : pieces_of(t)) {
    const Tensor& value = rank < 0 ? values : values.shards().at(rank);
    const TensorImpl& impl = *piece.impl();
    if (impl.sizes() != value.sizes())
      throw Error(
          fmt::format("restore_storage: the tensor{} has shape {} but the values have shape {}; they must "
                      "have the same shape",
                      where(rank), shape_text(impl.sizes()), shape_text(value.sizes())));
    if (!impl.storage()->released())
      throw Error(
          fmt::format("restore_storage: the tensor{} of shape {} is not released (its bytes are in place); "
                      "only a tensor given to release_storage can be restored",
                      where(rank), shape_text(impl.sizes())));
    const size_t spans = static_cast<size_t>(impl.numel()) * itemsize(impl.dtype());
    if (impl.offset() != 0 || !impl.is_contiguous() || spans != impl.storage()->bytes)
      throw Error(fmt::format(
          "restore_storage: the tensor{} of shape {} covers {} of its storage's {} bytes; restore "
          "the tensor that spans the whole storage (the one released, not a view of part of it), "
          "so that every byte gets a value",
          where(rank), shape_text(impl.sizes()), spans, impl.storage()->bytes));
  }
}

}  // namespace

void release_storage(const Tensor& t) {
  check_defined(t, "release_storage", "the tensor");
  // Every shard is checked before any is released: an exposed one refuses the whole release.
  const std::vector<std::pair<int, Tensor>> pieces = pieces_of(t);
  for (const auto& [rank, piece] : pieces) {
    const Storage& storage = *piece.impl()->storage();
    if (storage.exposed() && !storage.released())
      throw Error(
          fmt::format("release_storage: the address of the tensor{} of shape {} was handed out (data_ptr or "
                      "to_dlpack), so freeing its bytes would leave that pointer dangling; release a tensor "
                      "whose address nobody holds",
                      where(rank), shape_text(piece.impl()->sizes())));
  }
  for (const auto& [rank, piece] : pieces) piece.impl()->storage()->release_bytes();
}

void restore_storage(const Tensor& t, const Tensor& values) {
  check_restorable(t, values);
  for (const auto& [rank, piece] : pieces_of(t)) {
    const TensorImpl& impl = *piece.impl();
    const Tensor& value = rank < 0 ? values : values.shards().at(rank);
    // The values as dense contiguous bytes on the tensor's backend, made before the new bytes.
    const Tensor source = value.detach().to(piece.backend()).contiguous();
    Storage& storage = *impl.storage();
    storage.restore_bytes();
    const std::byte* from = source.impl()->bytes_at();
    if (storage.data != nullptr && from != nullptr)  // a shapes-only backend has no bytes
      impl.backend().copy(storage.data, from, storage.bytes, TESSERA_COPY_DEVICE_TO_DEVICE);
  }
}

bool storage_released(const Tensor& t) {
  check_defined(t, "storage_released", "the tensor");
  for (const auto& [rank, piece] : pieces_of(t))
    if (!piece.impl()->storage()->released()) return false;
  return true;
}

}  // namespace tessera
