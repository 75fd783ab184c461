// DLPack export and import (tessera/dlpack.hpp). Export hands out the storage's own bytes, which
// keep their address from then on; import wraps foreign bytes in a Storage whose owner is the
// producer's deleter, so both sides see writes.
#include "tessera/dlpack.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include "dispatch/backend.hpp"
#include "dispatch/backends.hpp"
#include "tensor/checked_arith.hpp"
#include "tensor/internal.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

// What an exported DLManagedTensor points to: the view it keeps alive and the shape and strides
// its DLTensor reads (DLPack's arrays must outlive the DLTensor).
struct ExportContext {
  Tensor keep_alive;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* managed) { delete static_cast<ExportContext*>(managed->manager_ctx); }

std::string dl_type_text(DLDataType type) {
  return fmt::format("{{code {}, {} bits, {} lanes}}", type.code, type.bits, type.lanes);
}

// The host backend foreign host memory is attached to.
std::shared_ptr<const dispatch::Backend> host_backend() {
  std::shared_ptr<const dispatch::Backend> preferred = dispatch::default_backend();
  if (preferred->device_type() == kDLCPU && !preferred->shapes_only()) return preferred;
  return dispatch::backend("cpu");
}

// The lowest and highest element offsets `shape`/`strides` address (both 0 for no elements).
std::pair<int64_t, int64_t> addressed_span(const Shape& shape, const std::vector<int64_t>& strides) {
  int64_t low = 0;
  int64_t high = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return {0, 0};
    const auto what = [] { return std::string("from_dlpack: the strides reach"); };
    const int64_t reach = detail::checked_mul(shape[d] - 1, strides[d], what);
    if (reach < 0)
      low = detail::checked_add(low, reach, what);
    else
      high = detail::checked_add(high, reach, what);
  }
  return {low, high};
}

Tensor import_dlpack(const DLTensor& dl, const std::shared_ptr<void>& owner) {
  if (dl.device.device_type != kDLCPU)
    throw Error(
        fmt::format("from_dlpack: the memory is on DLPack device type {} (id {}); only host memory "
                    "(kDLCPU, device type {}) can be shared",
                    static_cast<int>(dl.device.device_type), dl.device.device_id, static_cast<int>(kDLCPU)));
  DType dtype{};
  if (!dispatch::from_dl(dl.dtype, &dtype))
    throw Error(
        fmt::format("from_dlpack: element type {} is not one Tessera knows; expected float32, float64, "
                    "int32, int64, bool (code {}, 8 bits), bfloat16 (code {}, 16 bits), float16, int8 or "
                    "uint8, one lane",
                    dl_type_text(dl.dtype), TESSERA_DL_BOOL_CODE, static_cast<int>(kDLBfloat)));
  if (dl.ndim < 0 || dl.ndim > kMaxDims)
    throw Error(fmt::format("from_dlpack: {} dims; expected 0 to {}", dl.ndim, kMaxDims));
  const Shape shape(dl.shape, dl.shape + dl.ndim);
  const int64_t numel = shape_numel(shape, "from_dlpack");
  const std::vector<int64_t> strides = dl.strides != nullptr
                                           ? std::vector<int64_t>(dl.strides, dl.strides + dl.ndim)
                                           : contiguous_strides(shape);
  const auto [low, high] = addressed_span(shape, strides);
  const int64_t item = static_cast<int64_t>(itemsize(dtype));
  auto* first = static_cast<char*>(dl.data) + dl.byte_offset;
  if (numel > 0 && (dl.data == nullptr ||
                    reinterpret_cast<std::uintptr_t>(first) % static_cast<std::uintptr_t>(item) != 0))
    throw Error(
        fmt::format("from_dlpack: the {} elements start at address {}, which is not aligned to their {} "
                    "bytes",
                    dtype_name(dtype), static_cast<const void*>(first), item));
  const auto span_what = [] { return std::string("from_dlpack: the bytes addressed"); };
  const int64_t span_bytes = numel == 0 ? 0 : detail::checked_mul(high - low + 1, item, span_what);
  // The Storage starts at the lowest element addressed, so negative strides stay inside it.
  char* start = numel == 0 ? nullptr : first + low * item;
  auto storage = std::make_shared<Storage>(Storage::ForeignBytes{}, host_backend(), start,
                                           static_cast<size_t>(span_bytes), owner);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), dtype, shape, strides, -low, "from_dlpack"));
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& tensor) {
  if (tensor.is_local())
    throw Error(
        fmt::format("to_dlpack: a local tensor holds one shard per rank (ranks {}); export one shard "
                    "(t.shard(rank))",
                    tensor.ranks().to_string()));
  const TensorImpl& impl = detail::impl_of(tensor, "to_dlpack");
  if (impl.backend().shapes_only())
    throw Error(
        fmt::format("to_dlpack: the {} backend holds shapes only, so a tensor of shape {} has no values "
                    "to share; make it on a computing backend",
                    impl.backend().name(), shape_text(impl.sizes())));
  // The consumer may write and holds the address as long as it likes: the Storage gets bytes of
  // its own (never shared with another rank's replica) and keeps them (Storage, "Exposure").
  void* bytes = impl.storage()->expose_writable();
  auto context = std::make_unique<ExportContext>();
  context->keep_alive = tensor;
  context->shape = impl.sizes();
  context->strides = impl.strides();
  DLTensor& dl = context->managed.dl_tensor;
  // The offset goes into the pointer rather than byte_offset, which some consumers ignore.
  dl.data = bytes == nullptr
                ? nullptr
                : static_cast<char*>(bytes) + impl.offset() * static_cast<int64_t>(itemsize(impl.dtype()));
  dl.device = {static_cast<DLDeviceType>(impl.backend().device_type()), 0};
  dl.ndim = static_cast<int32_t>(impl.dim());
  dl.dtype = dispatch::to_dl(impl.dtype());
  dl.shape = context->shape.data();
  dl.strides = context->strides.data();
  dl.byte_offset = 0;
  context->managed.manager_ctx = context.get();
  context->managed.deleter = delete_export;
  return &context.release()->managed;
}

std::pair<int, int> dlpack_device(const Tensor& tensor) {
  if (tensor.is_local())
    throw Error(
        fmt::format("dlpack_device: a local tensor holds one shard per rank (ranks {}), each on its own; "
                    "ask one shard (t.shard(rank))",
                    tensor.ranks().to_string()));
  return {detail::impl_of(tensor, "dlpack_device").backend().device_type(), 0};
}

Tensor from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr)
    throw Error("from_dlpack: got a null DLManagedTensor; expected one from a producer");
  // Owns `managed` from here on: its deleter runs once the last view is gone, or now on an error.
  const std::shared_ptr<void> owner(managed, [](void* held) {
    auto* tensor = static_cast<DLManagedTensor*>(held);
    if (tensor->deleter != nullptr) tensor->deleter(tensor);
  });
  return import_dlpack(managed->dl_tensor, owner);
}

}  // namespace tessera
