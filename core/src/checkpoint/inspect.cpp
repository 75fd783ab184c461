// dcp::inspect (what `tessera checkpoint inspect DIR` prints) and dcp::consolidate.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "checkpoint/boxes.hpp"
#include "checkpoint/chunk_reader.hpp"
#include "checkpoint/files.hpp"
#include "checkpoint/metadata.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/errors.hpp"

namespace tessera::dcp {
namespace {

int64_t entry_bytes(const EntryMeta& e) {
  int64_t n = 0;
  for (const ChunkMeta& c : e.chunks) n += c.data_end - c.data_begin;
  return n;
}

std::string byte_size_text(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (int64_t{1} << 20)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  if (bytes < (int64_t{1} << 30)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30));
}

std::string scalar_text(const EntryMeta& e) {
  switch (e.kind) {
    case EntryKind::int64:
      return std::to_string(e.int_value);
    case EntryKind::float64:
      return fmt::format("{}", e.float_value);
    case EntryKind::string:
      return nlohmann::json(e.string_value).dump();
    default:
      return "";
  }
}

}  // namespace

std::string inspect(const std::string& path) {
  const Metadata metadata = read_metadata(path);
  std::vector<std::vector<std::string>> rows = {
      {"key", "kind", "dtype", "shape", "placements", "chunks", "bytes"}};
  int64_t total = 0;
  for (const auto& [key, e] : metadata.entries) {
    if (e.kind == EntryKind::int64 || e.kind == EntryKind::float64 || e.kind == EntryKind::string) {
      rows.push_back({key, kind_name(e.kind), "", "", "", "", "= " + scalar_text(e)});
      continue;
    }
    std::string shape = fmt::format("[{}]", fmt::join(e.shape, ", "));
    std::string placements;
    if (e.kind == EntryKind::dtensor)
      placements = fmt::format("{} on mesh [{}]", e.placements, fmt::join(e.mesh_shape, ", "));
    if (e.kind == EntryKind::local) {
      std::vector<int> ranks;
      for (const ChunkMeta& c : e.chunks) ranks.insert(ranks.end(), c.ranks.begin(), c.ranks.end());
      std::sort(ranks.begin(), ranks.end());
      shape = "per rank";
      placements = fmt::format("ranks {{{}}}", fmt::join(ranks, ", "));
    }
    const int64_t bytes = entry_bytes(e);
    total += bytes;
    rows.push_back({key, kind_name(e.kind), std::string(dtype_name(e.dtype)), shape, placements,
                    std::to_string(e.chunks.size()), byte_size_text(bytes)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out = fmt::format("checkpoint {} (generation {}, {} entries, {} of tensor data)\n", path,
                                metadata.generation, metadata.entries.size(), byte_size_text(total));
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += fmt::format("{:<{}}  ", row[i], width[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += "files:\n";
  for (const std::string& file : metadata.files) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path + "/" + file, ec);
    out += fmt::format("  {}  {}\n", file, ec ? "MISSING" : byte_size_text(static_cast<int64_t>(size)));
  }
  return out;
}

void consolidate(const std::string& path, const std::string& file) {
  const Metadata metadata = read_metadata(path);
  // The entries of the consolidated file: a full tensor per global entry, a tensor per rank of a
  // local one; each assembled from the chunks that cover it.
  struct Item {
    std::string name;
    const std::string* key;
    const EntryMeta* entry;
    Box box;                      // what it holds (global coordinates)
    std::optional<size_t> chunk;  // a local entry's shard
  };
  std::vector<Item> items;
  nlohmann::json scalars = nlohmann::json::object();
  for (const auto& [key, e] : metadata.entries) {
    if (e.kind == EntryKind::local) {
      for (size_t i = 0; i < e.chunks.size(); ++i)
        for (int r : e.chunks[i].ranks)
          items.push_back(
              {fmt::format("{}@rank{}", key, r), &key, &e, Box{e.chunks[i].offsets, e.chunks[i].sizes}, i});
    } else if (e.kind == EntryKind::tensor || e.kind == EntryKind::dtensor) {
      items.push_back({key, &key, &e, Box{std::vector<int64_t>(e.shape.size(), 0), e.shape}, std::nullopt});
    } else {
      scalars[key] = scalar_text(e);
    }
  }
  nlohmann::json header = nlohmann::json::object();
  int64_t at = 0;
  for (const Item& item : items) {
    const int64_t bytes = item.box.numel() * static_cast<int64_t>(itemsize(item.entry->dtype));
    header[item.name] = {{"dtype", safetensors_dtype(item.entry->dtype)},
                         {"shape", item.box.sizes},
                         {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  nlohmann::json info = {{"format", "pt"}};
  for (const auto& [key, value] : scalars.items()) info[key] = value;
  header["__metadata__"] = info;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t length = text.size();
  File out(file, File::Mode::create);
  out.write_all(&length, 8);
  out.write_all(text.data(), text.size());
  ChunkReader reader(path);
  for (const Item& item : items) {
    const EntryMeta& e = *item.entry;
    std::vector<std::byte> bytes(static_cast<size_t>(item.box.numel()) * itemsize(e.dtype));
    if (bytes.empty()) continue;
    int64_t covered = 0;
    for (size_t i = 0; i < e.chunks.size(); ++i) {
      if (item.chunk && *item.chunk != i) continue;
      const ChunkMeta& c = e.chunks[i];
      const std::optional<Box> region = intersect(item.box, Box{c.offsets, c.sizes});
      if (!region) continue;
      reader.read_region(*item.key, e, i, *region, bytes.data(), item.box);
      covered += region->numel();
    }
    if (covered != item.box.numel())
      throw Error(
          fmt::format("checkpoint '{}': entry '{}': its chunks cover {} of its {} elements; the metadata is "
                      "damaged",
                      path, *item.key, covered, item.box.numel()));
    out.write_all(bytes.data(), bytes.size());
  }
  out.sync();
}

}  // namespace tessera::dcp
