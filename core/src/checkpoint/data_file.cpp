#include "checkpoint/data_file.hpp"

#include <fmt/format.h>

#include <bit>
#include <map>
#include <nlohmann/json.hpp>

#include "checkpoint/crc32c.hpp"
#include "checkpoint/files.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera::dcp {

static_assert(std::endian::native == std::endian::little,
              "checkpoint files hold little-endian bytes, written as they lie in memory");

std::string chunk_entry_name(const std::string& key, size_t index) {
  return fmt::format("{}|{}", key, index);
}

namespace {

// Data is written in pieces of about this many bytes (whole checksum blocks), each a crash point.
constexpr int64_t kWritePiece = int64_t{1} << 20;

int64_t planned_chunk_bytes(const PlannedChunk& c) {
  return c.bytes.numel() * static_cast<int64_t>(itemsize(c.dtype));
}

int64_t blocks_of(int64_t bytes, int64_t block) { return bytes == 0 ? 0 : (bytes + block - 1) / block; }

}  // namespace

std::vector<std::pair<std::string, ChunkMeta>> read_data_file_chunks(const std::string& path,
                                                                     const std::string& file) {
  const File in(path, File::Mode::read);
  uint64_t length = 0;
  const auto fail = [&](const std::string& why) {
    return Error(fmt::format("checkpoint: data file '{}' has no valid header: {}", path, why));
  };
  if (in.read_at(&length, 8, 0) != 8) throw fail("shorter than 8 bytes");
  if (static_cast<int64_t>(length) > in.size() - 8)
    throw fail(fmt::format("header length {} exceeds the file", length));
  std::string text(length, '\0');
  in.read_at(text.data(), length, 8);
  const int64_t base = 8 + static_cast<int64_t>(length);
  std::vector<std::pair<std::string, ChunkMeta>> chunks;
  try {
    const nlohmann::json header = nlohmann::json::parse(text);
    const nlohmann::json& info = header.at("__metadata__");
    const int64_t block_bytes = std::stoll(info.at("block_bytes").get<std::string>());
    const nlohmann::json boxes = nlohmann::json::parse(info.at("chunks").get<std::string>());
    std::map<std::string, size_t> index_of_key;
    for (const nlohmann::json& box : boxes) {
      ChunkMeta meta;
      const std::string key = box.at("key").get<std::string>();
      meta.offsets = box.at("offsets").get<std::vector<int64_t>>();
      meta.sizes = box.at("sizes").get<std::vector<int64_t>>();
      meta.ranks = box.at("ranks").get<std::vector<int>>();
      meta.file = file;
      meta.name = chunk_entry_name(key, index_of_key[key]++);
      const auto data = header.at(meta.name).at("data_offsets").get<std::vector<int64_t>>();
      const auto crc = header.at(meta.name + "|crc32c").at("data_offsets").get<std::vector<int64_t>>();
      meta.data_begin = base + data.at(0);
      meta.data_end = base + data.at(1);
      meta.crc_begin = base + crc.at(0);
      meta.crc_end = base + crc.at(1);
      meta.block_bytes = block_bytes;
      chunks.emplace_back(key, std::move(meta));
    }
  } catch (const std::exception& e) {
    throw fail(e.what());
  }
  return chunks;
}

int64_t write_data_file(SavePlan& plan, const std::string& path, const std::string& file, int64_t block_bytes,
                        CrashPoints& crash) {
  // Offsets relative to the end of the header, as safetensors counts them: data first, then tables.
  nlohmann::json header = nlohmann::json::object();
  int64_t at = 0;
  std::vector<int64_t> data_at, crc_at;
  for (const PlannedChunk& c : plan.chunks) {
    const ChunkMeta& meta = plan.metadata.entries.at(c.key).chunks[c.index];
    header[chunk_entry_name(c.key, c.index)] = {{"dtype", safetensors_dtype(c.dtype)},
                                                {"shape", meta.sizes},
                                                {"data_offsets", {at, at + planned_chunk_bytes(c)}}};
    data_at.push_back(at);
    at += planned_chunk_bytes(c);
  }
  for (const PlannedChunk& c : plan.chunks) {
    const int64_t table = 4 * blocks_of(planned_chunk_bytes(c), block_bytes);
    header[chunk_entry_name(c.key, c.index) + "|crc32c"] = {
        {"dtype", "U32"}, {"shape", {table / 4}}, {"data_offsets", {at, at + table}}};
    crc_at.push_back(at);
    at += table;
  }
  // The chunks' global boxes (and a local tensor's ranks), so that the metadata's writer can list
  // another process's chunks from its file alone.
  nlohmann::json boxes = nlohmann::json::array();
  for (const PlannedChunk& c : plan.chunks) {
    const ChunkMeta& meta = plan.metadata.entries.at(c.key).chunks[c.index];
    boxes.push_back(
        {{"key", c.key}, {"offsets", meta.offsets}, {"sizes", meta.sizes}, {"ranks", meta.ranks}});
  }
  header["__metadata__"] = {
      {"format", kFormatName}, {"block_bytes", std::to_string(block_bytes)}, {"chunks", boxes.dump()}};
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t length = text.size();
  const int64_t base = 8 + static_cast<int64_t>(length);

  SequentialWriter out(path);
  out.append(&length, 8);
  out.append(text.data(), text.size());
  crash.reach();
  std::vector<std::vector<uint32_t>> tables;
  int64_t written = 0;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const PlannedChunk& c = plan.chunks[i];
    const int64_t n = planned_chunk_bytes(c);
    const auto* bytes = n == 0 ? nullptr : reinterpret_cast<const char*>(c.bytes.impl()->bytes_at());
    std::vector<uint32_t> table;
    // Each piece is checksummed block by block and copied out while it is in cache.
    const int64_t piece = std::max<int64_t>(1, kWritePiece / block_bytes) * block_bytes;
    for (int64_t p = 0; p < n; p += piece) {
      const int64_t end = std::min(n, p + piece);
      for (int64_t b = p; b < end; b += block_bytes)
        table.push_back(crc32c(bytes + b, static_cast<size_t>(std::min(block_bytes, n - b))));
      out.append(bytes + p, static_cast<size_t>(end - p));
      crash.reach();
    }
    tables.push_back(std::move(table));
    written += n;
    ChunkMeta& meta = plan.metadata.entries.at(c.key).chunks[c.index];
    meta.file = file;
    meta.name = chunk_entry_name(c.key, c.index);
    meta.data_begin = base + data_at[i];
    meta.data_end = meta.data_begin + n;
    meta.crc_begin = base + crc_at[i];
    meta.crc_end = meta.crc_begin + 4 * static_cast<int64_t>(tables.back().size());
    meta.block_bytes = block_bytes;
  }
  for (const std::vector<uint32_t>& table : tables) out.append(table.data(), table.size() * 4);
  crash.reach();
  out.close();
  crash.reach();
  return written;
}

}  // namespace tessera::dcp
