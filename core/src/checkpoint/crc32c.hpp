// CRC32C (Castagnoli), the checksum of checkpoint blocks: the SSE4.2 instruction where the CPU has
// it (several GB/s, well above a disk's bandwidth), a table otherwise. Both give the same values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::dcp {

// The CRC32C of `size` bytes at `data`, continuing from `crc` (0 to start).
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace tessera::dcp
