// Reads regions of saved chunks: only the byte runs a region occupies, widened to whole checksum
// blocks, each block checked against the chunk's CRC32C table. Errors name the checkpoint, the
// entry, the chunk and the data file.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "checkpoint/boxes.hpp"
#include "checkpoint/files.hpp"
#include "checkpoint/metadata.hpp"
#include "tessera/checkpoint.hpp"

namespace tessera::dcp {

class ChunkReader {
 public:
  explicit ChunkReader(std::string dir) : dir_(std::move(dir)) {}

  // Copies `region` (global coordinates, inside chunk `index` of entry `key`) into `dst`, a
  // row-major buffer holding box `dst_box`.
  void read_region(const std::string& key, const EntryMeta& entry, size_t index, const Box& region,
                   std::byte* dst, const Box& dst_box);
  // The whole chunk, checked, into `dst` (row-major, the chunk's box).
  void read_chunk(const std::string& key, const EntryMeta& entry, size_t index, std::byte* dst);

  const LoadStats& stats() const { return stats_; }

 private:
  const File& file(const std::string& name, const std::string& where);
  std::string where(const std::string& key, const EntryMeta& entry, size_t index) const;

  std::string dir_;
  std::map<std::string, std::unique_ptr<File>> files_;
  LoadStats stats_;
};

}  // namespace tessera::dcp
