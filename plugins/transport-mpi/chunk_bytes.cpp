#include "chunk_bytes.hpp"

#include <cstdint>
#include <string>

#include "mpi_error.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace tessera::transport_mpi {
namespace {

[[noreturn]] void invalid(const char* call, const std::string& what) {
  fail(TESSERA_INVALID_ARGUMENT, std::string(call) + ": chunk " + what);
}

std::string shape_text(const DLTensor& chunk) {
  std::string text = "[";
  for (int d = 0; d < chunk.ndim; ++d) text += (d > 0 ? ", " : "") + std::to_string(chunk.shape[d]);
  return text + "]";
}

std::string strides_text(const DLTensor& chunk) {
  std::string text = "[";
  for (int d = 0; d < chunk.ndim; ++d) text += (d > 0 ? ", " : "") + std::to_string(chunk.strides[d]);
  return text + "]";
}

}  // namespace

ChunkBytes chunk_bytes(const DLTensor& chunk, const char* call) {
  if (chunk.device.device_type != kDLCPU)
    invalid(call, "is on device type " + std::to_string(static_cast<int>(chunk.device.device_type)) +
                      ", expected host memory (kDLCPU = " + std::to_string(static_cast<int>(kDLCPU)) + ")");
  if (chunk.ndim < 0) invalid(call, "has ndim " + std::to_string(chunk.ndim) + ", expected >= 0");
  if (chunk.ndim > 0 && chunk.shape == nullptr)
    invalid(call, "has ndim " + std::to_string(chunk.ndim) + " but no shape (shape is NULL)");
  if (chunk.dtype.bits == 0 || chunk.dtype.lanes == 0)
    invalid(call, "has dtype with " + std::to_string(chunk.dtype.bits) + " bits and " +
                      std::to_string(chunk.dtype.lanes) + " lanes, expected both >= 1");

  // numel, with every multiplication checked: a shape from a corrupt DLTensor must not wrap around
  // into a small, plausible byte count.
  uint64_t numel = 1;
  for (int d = 0; d < chunk.ndim; ++d) {
    if (chunk.shape[d] < 0)
      invalid(call, "has shape " + shape_text(chunk) + " with negative size " +
                        std::to_string(chunk.shape[d]) + " in dim " + std::to_string(d) +
                        ", expected sizes >= 0");
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(chunk.shape[d]), &numel))
      invalid(call, "has shape " + shape_text(chunk) + ", whose element count overflows 64 bits");
  }
  // bits * lanes is at most 255 * 65535: no overflow in 64 bits.
  const uint64_t element_bytes = (static_cast<uint64_t>(chunk.dtype.bits) * chunk.dtype.lanes + 7) / 8;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(numel, element_bytes, &bytes) || bytes > static_cast<uint64_t>(PTRDIFF_MAX))
    invalid(call, "has shape " + shape_text(chunk) + " of " + std::to_string(element_bytes) +
                      "-byte elements, whose byte count does not fit in memory");

  if (chunk.strides != nullptr && !sdk::is_contiguous(chunk))
    invalid(call, "has shape " + shape_text(chunk) + " and strides " + strides_text(chunk) +
                      ", expected contiguous row-major strides (or NULL strides)");
  if (bytes > 0 && chunk.data == nullptr)
    invalid(call,
            "of " + std::to_string(bytes) + " bytes has a NULL data pointer, expected its bytes' address");

  ChunkBytes result;
  result.bytes = static_cast<size_t>(bytes);
  if (chunk.data != nullptr) result.data = static_cast<std::byte*>(chunk.data) + chunk.byte_offset;
  return result;
}

}  // namespace tessera::transport_mpi
