// Chunks for the tests: a DLTensor over bytes the test owns, with the shape, strides and dtype a
// case asks for. The expected byte length of each case is written out in the test, not derived here.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace transport_test {

class Chunk {
 public:
  // `storage_bytes` of storage (byte_offset included), viewed at `byte_offset` as `dtype` with `shape` and
  // `strides` (empty: NULL).
  Chunk(size_t storage_bytes, DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {},
        size_t byte_offset = 0);
  // A 1-d uint8 chunk of `bytes` bytes.
  static Chunk of_bytes(size_t bytes);

  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  const DLTensor& tensor() const { return tensor_; }
  DLTensor& tensor() { return tensor_; }
  std::vector<std::byte>& storage() { return storage_; }
  const std::vector<std::byte>& storage() const { return storage_; }

 private:
  std::vector<std::byte> storage_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  DLTensor tensor_{};
};

// The byte the test puts at `position` of a message from process `sender` with `tag`: a formula
// the receiver recomputes, so a message from the wrong sender, tag or place shows.
std::byte pattern_byte(int sender, int64_t tag, size_t position);
void fill_pattern(std::byte* data, size_t bytes, int sender, int64_t tag);
// The first position where `data` differs from the pattern, or `bytes` when it matches.
size_t pattern_mismatch(const std::byte* data, size_t bytes, int sender, int64_t tag);

}  // namespace transport_test
