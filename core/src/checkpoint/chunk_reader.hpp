// Reads saved chunks into the buffers that need them: each chunk once per process however many
// hosted ranks need parts of it, in pieces of a few MiB (contiguous in the chunk's bytes) that
// threads read in parallel. A piece reads the union of the byte runs its regions occupy, widened
// to whole checksum blocks (every block read is checked against the chunk's CRC32C table), with
// small gaps between runs read through when that costs at most a sixteenth more bytes (one read
// instead of many). Long runs are read with O_DIRECT where the file system takes it (no copy
// through the page cache, the disk at its sequential speed); short ones through the page cache.
// Errors name the checkpoint, the entry, the chunk and the data file.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/boxes.hpp"
#include "checkpoint/files.hpp"
#include "checkpoint/metadata.hpp"
#include "tessera/checkpoint.hpp"

namespace tessera::dcp {

// A region (global coordinates) of a saved chunk that a buffer needs: `dst` is row-major and
// holds box `dst_box`.
struct RegionCopy {
  Box region;
  std::byte* dst = nullptr;
  Box dst_box;
};

// A piece of chunk `index` of entry `key`: `box`, whose bytes are contiguous in the chunk, and
// the regions within it that buffers need.
struct ChunkPiece {
  const std::string* key = nullptr;
  const EntryMeta* entry = nullptr;
  size_t index = 0;
  Box box;
  std::vector<RegionCopy> copies;
};

// Cuts what buffers need of one chunk into pieces of about `piece_bytes` (whole rows of the
// chunk's outer dims where a row fits), each with the parts of `copies` inside it; pieces nobody
// needs are left out.
std::vector<ChunkPiece> cut_into_pieces(const std::string& key, const EntryMeta& entry, size_t index,
                                        const std::vector<RegionCopy>& copies, int64_t piece_bytes);

class ChunkReader {
 public:
  explicit ChunkReader(std::string dir) : dir_(std::move(dir)) {}

  // Reads the piece's needed bytes and copies every region of it to its buffer.
  void read_piece(const ChunkPiece& piece);
  // Copies `region` (global coordinates, inside chunk `index` of entry `key`) into `dst`, a
  // row-major buffer holding box `dst_box`.
  void read_region(const std::string& key, const EntryMeta& entry, size_t index, const Box& region,
                   std::byte* dst, const Box& dst_box);

  const LoadStats& stats() const { return stats_; }

 private:
  const File& file(const std::string& name, const std::string& where);
  std::string where(const std::string& key, const EntryMeta& entry, size_t index) const;
  // An aligned buffer of at least `bytes`, reused across pieces.
  std::byte* scratch(size_t bytes);

  std::string dir_;
  std::map<std::string, std::unique_ptr<File>> files_;
  LoadStats stats_;
  std::unique_ptr<std::byte, void (*)(void*)> scratch_{nullptr, nullptr};
  size_t scratch_bytes_ = 0;
};

}  // namespace tessera::dcp
