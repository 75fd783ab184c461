// A checkpoint data file: the safetensors layout (an 8-byte little-endian header length, a JSON
// header padded with spaces to 8 bytes, then raw little-endian bytes), holding each chunk as one
// entry "<key>|<index>" of its dtype and box shape, and after all chunks each chunk's block
// checksums as a U32 entry "<key>|<index>|crc32c".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/crash_points.hpp"
#include "checkpoint/save_plan.hpp"

namespace tessera::dcp {

std::string chunk_entry_name(const std::string& key, size_t index);

// The chunks a data file holds (key, and its metadata with byte ranges), from its header: how the
// metadata's writer learns the chunks other processes wrote.
std::vector<std::pair<std::string, ChunkMeta>> read_data_file_chunks(const std::string& path,
                                                                     const std::string& file);

// Writes `plan.chunks` to `path` (file name `file` in the metadata) and fsyncs it; fills each
// chunk's file, name and byte ranges in plan.metadata. Returns the tensor bytes written.
int64_t write_data_file(SavePlan& plan, const std::string& path, const std::string& file, int64_t block_bytes,
                        CrashPoints& crash);

}  // namespace tessera::dcp
