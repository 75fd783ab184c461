#include "checkpoint/metadata.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "tessera/errors.hpp"

namespace tessera::dcp {
namespace {

using nlohmann::json;

struct KindName {
  EntryKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {{EntryKind::tensor, "tensor"}, {EntryKind::dtensor, "dtensor"},
                                   {EntryKind::local, "local"},   {EntryKind::int64, "int"},
                                   {EntryKind::float64, "float"}, {EntryKind::string, "string"}};

struct DTypeName {
  DType dtype;
  const char* safetensors;
};
constexpr DTypeName kDTypeNames[] = {{kBool, "BOOL"},   {kInt32, "I32"},   {kInt64, "I64"},
                                     {kFloat32, "F32"}, {kFloat64, "F64"}, {kBFloat16, "BF16"},
                                     {kFloat16, "F16"}, {kInt8, "I8"},     {kUInt8, "U8"}};

EntryKind parse_kind(const std::string& name, const std::string& where) {
  for (const KindName& k : kKindNames)
    if (name == k.name) return k.kind;
  throw Error(fmt::format(
      "{}: unknown entry kind '{}'; expected tensor, dtensor, local, int, float or string", where, name));
}

DType parse_dtype_name(const std::string& name, const std::string& where) {
  for (const DTypeName& d : kDTypeNames)
    if (name == dtype_name(d.dtype)) return d.dtype;
  throw Error(fmt::format("{}: unknown dtype '{}'", where, name));
}

// A field that must be present and of the JSON type the getter asks for.
template <class T>
T json_field(const json& object, const char* name, const std::string& where) {
  if (!object.is_object() || !object.contains(name))
    throw Error(fmt::format("{}: field '{}' is missing", where, name));
  try {
    return object.at(name).get<T>();
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: field '{}' has the wrong type ({})", where, name, e.what()));
  }
}

// Elements times bytes per element, or an Error when a count is negative or the product does
// not fit in int64 (a damaged or hostile `.metadata` must not overflow a size computation).
int64_t checked_bytes(const std::vector<int64_t>& dims, size_t item, const std::string& what,
                      const std::string& where) {
  int64_t bytes = static_cast<int64_t>(item);
  for (int64_t d : dims) {
    if (d < 0)
      throw Error(fmt::format("{}: {} [{}] has a negative size", where, what, fmt::join(dims, ", ")));
    if (__builtin_mul_overflow(bytes, d, &bytes))
      throw Error(fmt::format("{}: {} [{}] holds more bytes than fit in 64 bits: the metadata is damaged",
                              where, what, fmt::join(dims, ", ")));
  }
  return bytes;
}

// A tensor entry's chunks: each inside the global shape (local entries have none), with byte
// ranges of exactly its elements and checksums, all sizes free of overflow.
void check_chunks(const EntryMeta& e, const std::string& where) {
  const size_t item = itemsize(e.dtype);
  if (e.kind != EntryKind::local) checked_bytes(e.shape, item, "the shape", where);
  for (size_t i = 0; i < e.chunks.size(); ++i) {
    const ChunkMeta& c = e.chunks[i];
    const std::string at = fmt::format("{} chunk {}", where, i);
    const int64_t bytes = checked_bytes(c.sizes, item, "the chunk's sizes", at);
    if (e.kind != EntryKind::local) {
      if (c.sizes.size() != e.shape.size())
        throw Error(fmt::format("{}: the chunk has {} dims but the entry's shape [{}] has {}", at,
                                c.sizes.size(), fmt::join(e.shape, ", "), e.shape.size()));
      for (size_t d = 0; d < c.sizes.size(); ++d)
        if (c.offsets[d] < 0 || c.offsets[d] > e.shape[d] - c.sizes[d])
          throw Error(fmt::format("{}: the chunk at offsets [{}] with sizes [{}] lies outside the shape [{}]",
                                  at, fmt::join(c.offsets, ", "), fmt::join(c.sizes, ", "),
                                  fmt::join(e.shape, ", ")));
    }
    const int64_t blocks = bytes / c.block_bytes + (bytes % c.block_bytes != 0 ? 1 : 0);
    if (c.data_end - c.data_begin != bytes || c.crc_end - c.crc_begin != 4 * blocks)
      throw Error(fmt::format(
          "{}: the byte ranges hold {} data and {} checksum bytes; its elements need {} and {} (blocks of {} "
          "bytes): the metadata is damaged",
          at, c.data_end - c.data_begin, c.crc_end - c.crc_begin, bytes, 4 * blocks, c.block_bytes));
  }
}

json chunk_json(const ChunkMeta& c) {
  json j = {{"offsets", c.offsets},
            {"sizes", c.sizes},
            {"file", c.file},
            {"name", c.name},
            {"data", {c.data_begin, c.data_end}},
            {"crc32c", {c.crc_begin, c.crc_end}},
            {"block_bytes", c.block_bytes}};
  if (!c.ranks.empty()) j["ranks"] = c.ranks;
  return j;
}

ChunkMeta parse_chunk(const json& j, const std::string& where) {
  ChunkMeta c;
  c.offsets = json_field<std::vector<int64_t>>(j, "offsets", where);
  c.sizes = json_field<std::vector<int64_t>>(j, "sizes", where);
  c.file = json_field<std::string>(j, "file", where);
  c.name = json_field<std::string>(j, "name", where);
  const auto data = json_field<std::vector<int64_t>>(j, "data", where);
  const auto crc = json_field<std::vector<int64_t>>(j, "crc32c", where);
  c.block_bytes = json_field<int64_t>(j, "block_bytes", where);
  if (j.contains("ranks")) c.ranks = json_field<std::vector<int>>(j, "ranks", where);
  if (data.size() != 2 || crc.size() != 2 || data[0] < 0 || data[1] < data[0] || crc[0] < 0 ||
      crc[1] < crc[0])
    throw Error(fmt::format("{}: byte ranges 'data' and 'crc32c' must be [begin, end] with 0 <= begin <= end",
                            where));
  if (c.offsets.size() != c.sizes.size() || c.block_bytes <= 0)
    throw Error(
        fmt::format("{}: 'offsets' and 'sizes' must have one value per dim and 'block_bytes' be > 0", where));
  for (int64_t s : c.sizes)
    if (s < 0) throw Error(fmt::format("{}: a chunk size is negative", where));
  if (c.file.find('/') != std::string::npos || c.file.empty() || c.file[0] == '.')
    throw Error(fmt::format("{}: data file name '{}' must be a plain file name in the checkpoint directory",
                            where, c.file));
  c.data_begin = data[0];
  c.data_end = data[1];
  c.crc_begin = crc[0];
  c.crc_end = crc[1];
  return c;
}

// Doubles are kept by their bits too: JSON has no NaN or infinity, and its decimal form is for
// people reading the file.
std::string double_bits(double value) { return fmt::format("{:016x}", std::bit_cast<uint64_t>(value)); }

}  // namespace

const char* kind_name(EntryKind kind) {
  for (const KindName& k : kKindNames)
    if (k.kind == kind) return k.name;
  return "?";
}

const char* safetensors_dtype(DType dtype) {
  for (const DTypeName& d : kDTypeNames)
    if (d.dtype == dtype) return d.safetensors;
  throw Error(fmt::format("dtype {} has no safetensors name", dtype_name(dtype)));
}

DType dtype_from_safetensors(const std::string& name, const std::string& where) {
  for (const DTypeName& d : kDTypeNames)
    if (name == d.safetensors) return d.dtype;
  throw Error(fmt::format("{}: safetensors dtype '{}' is not one Tessera has", where, name));
}

std::string metadata_json(const Metadata& metadata) {
  json entries = json::object();
  for (const auto& [key, e] : metadata.entries) {
    json j = {{"kind", kind_name(e.kind)}};
    switch (e.kind) {
      case EntryKind::int64:
        j["value"] = e.int_value;
        break;
      case EntryKind::float64:
        j["bits"] = double_bits(e.float_value);
        if (std::isfinite(e.float_value)) j["value"] = e.float_value;
        break;
      case EntryKind::string:
        j["value"] = e.string_value;
        break;
      default: {
        j["dtype"] = std::string(dtype_name(e.dtype));
        if (e.kind != EntryKind::local) j["shape"] = e.shape;
        if (e.kind == EntryKind::dtensor) {
          j["placements"] = e.placements;
          j["mesh"] = e.mesh_shape;
        }
        json chunks = json::array();
        for (const ChunkMeta& c : e.chunks) chunks.push_back(chunk_json(c));
        j["chunks"] = std::move(chunks);
      }
    }
    entries[key] = std::move(j);
  }
  const json file = {{"format", kFormatName},
                     {"version", kFormatVersion},
                     {"generation", metadata.generation},
                     {"files", metadata.files},
                     {"entries", std::move(entries)}};
  return file.dump(1) + "\n";
}

Metadata parse_metadata(const std::string& text, const std::string& where) {
  json file;
  try {
    file = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: not valid JSON ({})", where, e.what()));
  }
  if (json_field<std::string>(file, "format", where) != kFormatName)
    throw Error(fmt::format("{}: field 'format' is '{}'; expected '{}'", where,
                            file.at("format").get<std::string>(), kFormatName));
  const int version = json_field<int>(file, "version", where);
  if (version != kFormatVersion)
    throw Error(
        fmt::format("{}: format version {}; this Tessera reads version {}", where, version, kFormatVersion));
  Metadata metadata;
  metadata.generation = json_field<int64_t>(file, "generation", where);
  metadata.files = json_field<std::vector<std::string>>(file, "files", where);
  const json entries = json_field<json>(file, "entries", where);
  if (!entries.is_object()) throw Error(fmt::format("{}: field 'entries' must be an object", where));
  for (const auto& [key, j] : entries.items()) {
    const std::string at = fmt::format("{}: entry '{}'", where, key);
    EntryMeta e;
    e.kind = parse_kind(json_field<std::string>(j, "kind", at), at);
    switch (e.kind) {
      case EntryKind::int64:
        e.int_value = json_field<int64_t>(j, "value", at);
        break;
      case EntryKind::float64: {
        const std::string bits = json_field<std::string>(j, "bits", at);
        size_t used = 0;
        uint64_t value = 0;
        try {
          value = std::stoull(bits, &used, 16);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != bits.size() || bits.size() != 16)
          throw Error(fmt::format("{}: 'bits' must be 16 hex digits, got '{}'", at, bits));
        e.float_value = std::bit_cast<double>(value);
        break;
      }
      case EntryKind::string:
        e.string_value = json_field<std::string>(j, "value", at);
        break;
      default: {
        e.dtype = parse_dtype_name(json_field<std::string>(j, "dtype", at), at);
        if (e.kind != EntryKind::local) e.shape = json_field<Shape>(j, "shape", at);
        if (e.kind == EntryKind::dtensor) {
          e.placements = json_field<std::string>(j, "placements", at);
          e.mesh_shape = json_field<std::vector<int64_t>>(j, "mesh", at);
        }
        const json chunks = json_field<json>(j, "chunks", at);
        if (!chunks.is_array()) throw Error(fmt::format("{}: field 'chunks' must be an array", at));
        for (size_t i = 0; i < chunks.size(); ++i)
          e.chunks.push_back(parse_chunk(chunks[i], fmt::format("{} chunk {}", at, i)));
        check_chunks(e, at);
      }
    }
    metadata.entries.emplace(key, std::move(e));
  }
  return metadata;
}

}  // namespace tessera::dcp
