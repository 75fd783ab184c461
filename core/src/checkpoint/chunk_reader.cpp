#include "checkpoint/chunk_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "checkpoint/crc32c.hpp"
#include "tessera/errors.hpp"

namespace tessera::dcp {
namespace {

// Runs at least this long are read with O_DIRECT: the aligned edges it adds (at most one
// alignment unit on each side) stay within a few percent of what is read.
constexpr int64_t kDirectRunBytes = int64_t{256} << 10;
constexpr auto kAlign = static_cast<int64_t>(File::kDirectAlign);

int64_t align_down(int64_t x) { return x / kAlign * kAlign; }
int64_t align_up(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Joins neighbouring runs across the shortest gaps first while the bytes added stay within
// `budget`: one read instead of several, for a few bytes more.
std::vector<ByteRun> bridge_small_gaps(const std::vector<ByteRun>& runs, int64_t budget) {
  if (runs.size() < 2) return runs;
  std::vector<std::pair<int64_t, size_t>> gaps;  // (length, index of the run before it)
  for (size_t i = 0; i + 1 < runs.size(); ++i) gaps.emplace_back(runs[i + 1].begin - runs[i].end, i);
  std::sort(gaps.begin(), gaps.end());
  std::vector<bool> bridged(gaps.size(), false);
  for (const auto& [length, i] : gaps) {
    if (length > budget) break;
    budget -= length;
    bridged[i] = true;
  }
  std::vector<ByteRun> joined{runs[0]};
  for (size_t i = 1; i < runs.size(); ++i) {
    if (bridged[i - 1])
      joined.back().end = runs[i].end;
    else
      joined.push_back(runs[i]);
  }
  return joined;
}

}  // namespace

std::vector<ChunkPiece> cut_into_pieces(const std::string& key, const EntryMeta& entry, size_t index,
                                        const std::vector<RegionCopy>& copies, int64_t piece_bytes) {
  const ChunkMeta& c = entry.chunks[index];
  const Box chunk{c.offsets, c.sizes};
  std::vector<ChunkPiece> pieces;
  if (copies.empty() || chunk.numel() == 0) return pieces;
  const auto add = [&](Box box) {
    ChunkPiece piece{&key, &entry, index, std::move(box), {}};
    for (const RegionCopy& copy : copies)
      if (const std::optional<Box> part = intersect(copy.region, piece.box))
        piece.copies.push_back({*part, copy.dst, copy.dst_box});
    if (!piece.copies.empty()) pieces.push_back(std::move(piece));
  };
  const size_t ndim = chunk.sizes.size();
  if (ndim == 0) {
    add(chunk);
    return pieces;
  }
  // The outermost dim one index of which spans at most piece_bytes: pieces are runs of its
  // indices (all of the dims inside it), for each index of the dims outside it.
  std::vector<int64_t> slice(ndim);  // bytes of one index of each dim
  slice[ndim - 1] = static_cast<int64_t>(itemsize(entry.dtype));
  for (size_t d = ndim - 1; d-- > 0;) slice[d] = slice[d + 1] * chunk.sizes[d + 1];
  size_t cut = 0;
  while (slice[cut] > piece_bytes) ++cut;
  const int64_t step = std::max<int64_t>(1, piece_bytes / slice[cut]);
  std::vector<int64_t> outer(cut, 0);
  while (true) {
    for (int64_t i = 0; i < chunk.sizes[cut]; i += step) {
      Box box = chunk;
      for (size_t d = 0; d < cut; ++d) {
        box.offsets[d] += outer[d];
        box.sizes[d] = 1;
      }
      box.offsets[cut] += i;
      box.sizes[cut] = std::min(step, chunk.sizes[cut] - i);
      add(std::move(box));
    }
    size_t d = cut;
    while (d > 0 && ++outer[d - 1] == chunk.sizes[d - 1]) outer[--d] = 0;
    if (d == 0) break;
  }
  return pieces;
}

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

std::byte* ChunkReader::scratch(size_t bytes) {
  if (bytes > scratch_bytes_) {
    const size_t size = static_cast<size_t>(align_up(static_cast<int64_t>(bytes)));
    scratch_ = {static_cast<std::byte*>(std::aligned_alloc(File::kDirectAlign, size)), &std::free};
    if (!scratch_)
      throw Error(fmt::format("checkpoint '{}': no memory for a read buffer of {} bytes", dir_, size));
    scratch_bytes_ = size;
  }
  return scratch_.get();
}

void ChunkReader::read_region(const std::string& key, const EntryMeta& entry, size_t index, const Box& region,
                              std::byte* dst, const Box& dst_box) {
  for (const ChunkPiece& piece :
       cut_into_pieces(key, entry, index, {{region, dst, dst_box}}, int64_t{8} << 20))
    read_piece(piece);
}

void ChunkReader::read_piece(const ChunkPiece& piece) {
  const std::string& key = *piece.key;
  const EntryMeta& entry = *piece.entry;
  const size_t index = piece.index;
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
  if (total == 0 || piece.copies.empty()) return;
  const File& f = file(c.file, where(key, entry, index));
  const auto truncated = [&](int64_t begin, int64_t end) {
    return Error(fmt::format(
        "{}: the file is truncated: the chunk needs file bytes [{}, {}) but the file has {} bytes",
        where(key, entry, index), begin, end, f.size()));
  };

  // The byte runs every region occupies, as whole blocks, ascending and merged.
  std::vector<ByteRun> runs;
  for (const RegionCopy& copy : piece.copies) {
    const std::vector<ByteRun> more = region_runs(chunk, copy.region, item);
    runs.insert(runs.end(), more.begin(), more.end());
  }
  std::sort(runs.begin(), runs.end(), [](const ByteRun& a, const ByteRun& b) { return a.begin < b.begin; });
  runs = widen_to_blocks(runs, block, total);
  int64_t needed = 0;
  for (const ByteRun& run : runs) needed += run.end - run.begin;
  runs = bridge_small_gaps(runs, needed / 16);

  const int64_t first_block = runs.front().begin / block;
  const int64_t last_block = (runs.back().end - 1) / block;
  std::vector<uint32_t> table(static_cast<size_t>(last_block - first_block + 1));
  const int64_t table_at = c.crc_begin + 4 * first_block;
  const auto table_bytes = static_cast<int64_t>(table.size() * 4);
  if (f.read_at(table.data(), static_cast<size_t>(table_bytes), table_at) != static_cast<size_t>(table_bytes))
    throw truncated(table_at, table_at + table_bytes);
  stats_.checksum_bytes_read += table_bytes;
  ++stats_.reads;

  // The buffer holds file bytes from `base` on, `base` aligned, so that O_DIRECT reads land on
  // aligned addresses.
  const int64_t base = align_down(c.data_begin + runs.front().begin);
  std::byte* buffer = scratch(static_cast<size_t>(align_up(c.data_begin + runs.back().end) - base));
  for (const ByteRun& run : runs) {
    const int64_t begin = c.data_begin + run.begin, end = c.data_begin + run.end;
    if (end - begin >= kDirectRunBytes) {
      const int64_t from = align_down(begin), to = align_up(end);
      const size_t got = f.read_direct_at(buffer + (from - base), static_cast<size_t>(to - from), from);
      if (from + static_cast<int64_t>(got) < end) throw truncated(begin, end);
      stats_.bytes_read += std::min(to, from + static_cast<int64_t>(got)) - from;
    } else {
      if (f.read_at(buffer + (begin - base), static_cast<size_t>(end - begin), begin) !=
          static_cast<size_t>(end - begin))
        throw truncated(begin, end);
      stats_.bytes_read += end - begin;
    }
    ++stats_.reads;
    for (int64_t b = run.begin / block; b * block < run.end; ++b) {
      const int64_t block_begin = b * block, block_end = std::min(total, block_begin + block);
      const uint32_t expected = table[static_cast<size_t>(b - first_block)];
      const uint32_t actual =
          crc32c(buffer + (c.data_begin + block_begin - base), static_cast<size_t>(block_end - block_begin));
      if (actual != expected)
        throw Error(fmt::format(
            "{}: checksum mismatch in block {} (chunk bytes [{}, {}), file bytes [{}, {})): CRC32C "
            "{:#010x}, the checksum table says {:#010x}; the file is corrupted",
            where(key, entry, index), b, block_begin, block_end, c.data_begin + block_begin,
            c.data_begin + block_end, actual, expected));
    }
  }
  const int64_t first_byte = runs.front().begin;
  for (const RegionCopy& copy : piece.copies)
    copy_region(buffer + (c.data_begin + first_byte - base), first_byte, chunk, copy.dst, copy.dst_box,
                copy.region, item);
}

}  // namespace tessera::dcp
