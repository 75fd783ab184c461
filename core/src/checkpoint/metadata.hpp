// The checkpoint's `.metadata`: what a load needs to know without opening a data file, as JSON
// (docs/checkpoint-format.md). Parsing checks every field, so that a damaged file is an Error
// naming the field rather than a wrong read later.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/dtype.hpp"
#include "tessera/tensor.hpp"

namespace tessera::dcp {

inline constexpr int kFormatVersion = 1;
inline constexpr const char* kFormatName = "tessera-dcp";

// One box of a tensor stored in a data file, row-major, followed elsewhere in the file by the
// CRC32C of each block of `block_bytes` bytes of it.
struct ChunkMeta {
  std::vector<int64_t> offsets;  // where the box starts in the global tensor (zeros for a local shard)
  std::vector<int64_t> sizes;
  std::vector<int> ranks;                // local-tensor entries only: the ranks whose shard this is
  std::string file;                      // data file name within the checkpoint directory
  std::string name;                      // the safetensors entry holding the bytes
  int64_t data_begin = 0, data_end = 0;  // absolute byte range in the file
  int64_t crc_begin = 0, crc_end = 0;    // the block checksums (little-endian uint32 each)
  int64_t block_bytes = 0;
};

enum class EntryKind { tensor, dtensor, local, int64, float64, string };
const char* kind_name(EntryKind kind);

struct EntryMeta {
  EntryKind kind = EntryKind::tensor;
  // Tensors:
  DType dtype = kFloat32;
  Shape shape;                      // global shape (tensor, dtensor); empty for local entries
  std::string placements;           // dtensor: as saved, e.g. "S(0),R"
  std::vector<int64_t> mesh_shape;  // dtensor: the mesh it was saved from
  std::vector<ChunkMeta> chunks;
  // Scalars:
  int64_t int_value = 0;
  double float_value = 0;
  std::string string_value;
};

struct Metadata {
  int64_t generation = 0;
  std::vector<std::string> files;  // every data file the entries name
  std::map<std::string, EntryMeta> entries;
};

std::string metadata_json(const Metadata& metadata);
// The `.metadata` of the checkpoint in directory `path` (an Error naming it when there is none).
Metadata read_metadata(const std::string& path);
// `where` names the file in errors.
Metadata parse_metadata(const std::string& text, const std::string& where);

// The safetensors names of dtypes ("F32", "BF16", ...) and back (an Error naming `where` for an
// unknown one).
const char* safetensors_dtype(DType dtype);
DType dtype_from_safetensors(const std::string& name, const std::string& where);

}  // namespace tessera::dcp
