#include "chunk.hpp"

#include <utility>

namespace transport_test {

Chunk::Chunk(size_t storage_bytes, DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides,
             size_t byte_offset)
    : storage_(storage_bytes), shape_(std::move(shape)), strides_(std::move(strides)) {
  tensor_.data = storage_.empty() ? nullptr : storage_.data();
  tensor_.device = DLDevice{kDLCPU, 0};
  tensor_.ndim = static_cast<int32_t>(shape_.size());
  tensor_.dtype = dtype;
  tensor_.shape = shape_.empty() ? nullptr : shape_.data();
  tensor_.strides = strides_.empty() ? nullptr : strides_.data();
  tensor_.byte_offset = byte_offset;
}

Chunk Chunk::of_bytes(size_t bytes) {
  return Chunk(bytes, DLDataType{kDLUInt, 8, 1}, {static_cast<int64_t>(bytes)});
}

std::byte pattern_byte(int sender, int64_t tag, size_t position) {
  // Mixes all three so that neighbouring positions, senders and tags all differ.
  const uint64_t mixed = static_cast<uint64_t>(sender) * 131 + static_cast<uint64_t>(tag) * 17 +
                         position * 7 + (position >> 8) * 3;
  return static_cast<std::byte>(mixed & 0xff);
}

void fill_pattern(std::byte* data, size_t bytes, int sender, int64_t tag) {
  for (size_t i = 0; i < bytes; ++i) data[i] = pattern_byte(sender, tag, i);
}

size_t pattern_mismatch(const std::byte* data, size_t bytes, int sender, int64_t tag) {
  for (size_t i = 0; i < bytes; ++i)
    if (data[i] != pattern_byte(sender, tag, i)) return i;
  return bytes;
}

}  // namespace transport_test
