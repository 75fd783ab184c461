#include "checkpoint/chunk_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "checkpoint/crc32c.hpp"
#include "tessera/errors.hpp"

namespace tessera::dcp {

std::string ChunkReader::where(const std::string& key, const EntryMeta& entry, size_t index) const {
  const ChunkMeta& c = entry.chunks[index];
  return fmt::format("checkpoint '{}': entry '{}', chunk {} (offsets [{}], sizes [{}]) in data file '{}'",
                     dir_, key, index, fmt::join(c.offsets, ", "), fmt::join(c.sizes, ", "), c.file);
}

const File& ChunkReader::file(const std::string& name, const std::string& where) {
  auto it = files_.find(name);
  if (it != files_.end()) return *it->second;
  try {
    it = files_.emplace(name, std::make_unique<File>(dir_ + "/" + name, File::Mode::read)).first;
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", where, e.what()));
  }
  ++stats_.files_opened;
  return *it->second;
}

void ChunkReader::read_chunk(const std::string& key, const EntryMeta& entry, size_t index, std::byte* dst) {
  const ChunkMeta& c = entry.chunks[index];
  const Box box{c.offsets, c.sizes};
  read_region(key, entry, index, box, dst, box);
}

void ChunkReader::read_region(const std::string& key, const EntryMeta& entry, size_t index, const Box& region,
                              std::byte* dst, const Box& dst_box) {
  const ChunkMeta& c = entry.chunks[index];
  const Box chunk{c.offsets, c.sizes};
  const size_t item = itemsize(entry.dtype);
  const int64_t total = chunk.numel() * static_cast<int64_t>(item);
  const int64_t block = c.block_bytes;
  const int64_t blocks = (total + block - 1) / block;
  if (c.data_end - c.data_begin != total || c.crc_end - c.crc_begin != 4 * blocks)
    throw Error(
        fmt::format("{}: the metadata gives it {} data bytes and {} checksum bytes; its {} elements of {} "
                    "need {} and {} (blocks of {} bytes): the metadata is damaged",
                    where(key, entry, index), c.data_end - c.data_begin, c.crc_end - c.crc_begin,
                    chunk.numel(), dtype_name(entry.dtype), total, 4 * blocks, block));
  if (total == 0) return;
  const File& f = file(c.file, where(key, entry, index));
  const auto truncated = [&](int64_t begin, int64_t end) {
    return Error(fmt::format(
        "{}: the file is truncated: the chunk needs file bytes [{}, {}) but the file has {} bytes",
        where(key, entry, index), begin, end, f.size()));
  };
  const std::vector<ByteRun> spans = widen_to_blocks(region_runs(chunk, region, item), block, total);
  const int64_t first_block = spans.front().begin / block;
  const int64_t last_block = (spans.back().end - 1) / block;
  std::vector<uint32_t> table(static_cast<size_t>(last_block - first_block + 1));
  const int64_t table_at = c.crc_begin + 4 * first_block;
  const auto table_bytes = static_cast<int64_t>(table.size() * 4);
  if (f.read_at(table.data(), static_cast<size_t>(table_bytes), table_at) != static_cast<size_t>(table_bytes))
    throw truncated(table_at, table_at + table_bytes);
  stats_.checksum_bytes_read += table_bytes;
  ++stats_.reads;
  ++stats_.chunks_read;

  // The whole chunk into one contiguous run of the destination: read straight there.
  const std::vector<ByteRun> dst_runs =
      region == chunk ? region_runs(dst_box, region, item) : std::vector<ByteRun>{};
  const bool direct = dst_runs.size() == 1;
  const int64_t base = spans.front().begin;
  std::vector<std::byte> staging(direct ? 0 : static_cast<size_t>(spans.back().end - base));
  std::byte* buffer = direct ? dst + dst_runs[0].begin : staging.data();
  // Many short spans (a rank cutting a chunk across its inner dims) are announced first, so that
  // the disk sees them together.
  if (spans.size() > 1)
    for (const ByteRun& span : spans) f.will_read(c.data_begin + span.begin, span.end - span.begin);
  for (const ByteRun& span : spans) {
    const int64_t length = span.end - span.begin;
    std::byte* at = buffer + (span.begin - base);
    if (f.read_at(at, static_cast<size_t>(length), c.data_begin + span.begin) != static_cast<size_t>(length))
      throw truncated(c.data_begin + span.begin, c.data_begin + span.end);
    stats_.bytes_read += length;
    ++stats_.reads;
    for (int64_t b = span.begin / block; b * block < span.end; ++b) {
      const int64_t begin = b * block, end = std::min(total, begin + block);
      const uint32_t expected = table[static_cast<size_t>(b - first_block)];
      const uint32_t actual = crc32c(buffer + (begin - base), static_cast<size_t>(end - begin));
      if (actual != expected)
        throw Error(fmt::format(
            "{}: checksum mismatch in block {} (chunk bytes [{}, {}), file bytes [{}, {})): CRC32C "
            "{:#010x}, the checksum table says {:#010x}; the file is corrupted",
            where(key, entry, index), b, begin, end, c.data_begin + begin, c.data_begin + end, actual,
            expected));
    }
  }
  if (!direct) copy_region(buffer, base, chunk, dst, dst_box, region, item);
}

}  // namespace tessera::dcp
