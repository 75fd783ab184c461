// dcp::load: checks every requested entry against the metadata first (presence, kind, dtype,
// shape, ranks), then fills each hosted rank's shard from the chunks it intersects.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <exception>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <thread>

#include "checkpoint/boxes.hpp"
#include "checkpoint/chunk_reader.hpp"
#include "checkpoint/commit.hpp"
#include "checkpoint/files.hpp"
#include "checkpoint/in_rank_programs.hpp"
#include "checkpoint/metadata.hpp"
#include "checkpoint/pending_save.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/autograd.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
#include "tessera/world.hpp"

namespace tessera::dcp {
namespace {

// One dense tensor to fill (a rank's shard, or a plain tensor): the global boxes it holds, each
// with where it starts in the tensor.
struct ShardWork {
  std::string key;
  const EntryMeta* entry = nullptr;
  int rank = -1;  // -1 for a plain tensor
  Tensor dest;
  std::vector<HeldBox> boxes;
  std::vector<size_t> chunks;  // for a local entry: the one chunk of this rank
  // Filled by Loader::prepare and read_into:
  bool in_place = false;
  Tensor buffer;  // the host tensor read into (dest itself when in place)
  std::byte* bytes = nullptr;
  int64_t needed = 0;
};

// Pieces of chunks are read on this many threads at most, each piece about this long.
constexpr size_t kLoadThreads = 8;
constexpr int64_t kPieceBytes = int64_t{8} << 20;

std::string dims_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::string value_kind(const StateValue& v) {
  if (const auto* t = std::get_if<Tensor>(&v)) return t->is_local() ? "a local tensor" : "a tensor";
  if (std::holds_alternative<DTensor>(v)) return "a DTensor";
  if (std::holds_alternative<int64_t>(v)) return "an int";
  if (std::holds_alternative<double>(v)) return "a float";
  return "a string";
}

std::string saved_kind(const EntryMeta& e) {
  switch (e.kind) {
    case EntryKind::tensor:
      return "a tensor";
    case EntryKind::dtensor:
      return fmt::format("a DTensor ({})", e.placements);
    case EntryKind::local:
      return "a local tensor";
    case EntryKind::int64:
      return "an int";
    case EntryKind::float64:
      return "a float";
    default:
      return "a string";
  }
}

bool is_tensor_kind(EntryKind k) {
  return k == EntryKind::tensor || k == EntryKind::dtensor || k == EntryKind::local;
}

class Loader {
 public:
  Loader(std::string dir, const Metadata& metadata) : dir_(std::move(dir)), metadata_(metadata) {}

  void plan(const std::string& key, StateValue& value) {
    const auto it = metadata_.entries.find(key);
    if (it == metadata_.entries.end())
      throw Error(fmt::format(
          "checkpoint '{}': no entry '{}' (the checkpoint has {} entries{}); a requested key must "
          "be in the checkpoint",
          dir_, key, metadata_.entries.size(), nearby_keys(key)));
    const EntryMeta& e = it->second;
    const auto mismatch = [&] {
      return Error(
          fmt::format("checkpoint '{}': entry '{}' was saved as {}, but the state dict holds {} there", dir_,
                      key, saved_kind(e), value_kind(value)));
    };
    if (auto* i = std::get_if<int64_t>(&value)) {
      if (e.kind != EntryKind::int64) throw mismatch();
      scalars_.emplace_back([i, &e] { *i = e.int_value; });
    } else if (auto* f = std::get_if<double>(&value)) {
      if (e.kind != EntryKind::float64) throw mismatch();
      scalars_.emplace_back([f, &e] { *f = e.float_value; });
    } else if (auto* s = std::get_if<std::string>(&value)) {
      if (e.kind != EntryKind::string) throw mismatch();
      scalars_.emplace_back([s, &e] { *s = e.string_value; });
    } else {
      if (!is_tensor_kind(e.kind)) throw mismatch();
      const DType dtype = std::holds_alternative<DTensor>(value) ? std::get<DTensor>(value).dtype()
                                                                 : std::get<Tensor>(value).dtype();
      if (dtype != e.dtype)
        throw Error(fmt::format(
            "checkpoint '{}': entry '{}' was saved as {} but the state dict's tensor is {}; dtypes "
            "must match (load does not cast)",
            dir_, key, dtype_name(e.dtype), dtype_name(dtype)));
      if (const auto* dt = std::get_if<DTensor>(&value))
        plan_dtensor(key, e, *dt);
      else
        plan_tensor(key, e, std::get<Tensor>(value));
    }
  }

  LoadStats run() {
    NoGradGuard no_grad;
    // Tensor work (buffers, copies back) stays on this thread. What the shards need of each saved
    // chunk is gathered first (so a chunk several hosted ranks need is read once), then cut into
    // pieces that a few threads read, so that a disk sees several requests at once.
    for (ShardWork& w : work_) prepare(w);
    std::map<std::pair<std::string, size_t>, std::vector<RegionCopy>> needs;  // (key, chunk) -> copies
    for (ShardWork& w : work_) collect(w, needs);
    std::vector<ChunkPiece> pieces;
    for (const auto& [chunk, copies] : needs) {
      std::vector<ChunkPiece> more =
          cut_into_pieces(chunk.first, metadata_.entries.at(chunk.first), chunk.second, copies, kPieceBytes);
      std::move(more.begin(), more.end(), std::back_inserter(pieces));
    }
    const size_t threads = std::min<size_t>(pieces.size(), kLoadThreads);
    std::vector<ChunkReader> readers;
    for (size_t t = 0; t < std::max<size_t>(threads, 1); ++t) readers.emplace_back(dir_);
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> errors(readers.size());
    const auto worker = [&](size_t t) {
      try {
        for (size_t i = next++; i < pieces.size(); i = next++) readers[t].read_piece(pieces[i]);
      } catch (...) {
        errors[t] = std::current_exception();
        next = pieces.size();  // the others stop after their current piece
      }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker, t);
    worker(0);
    for (std::thread& thread : pool) thread.join();
    for (const std::exception_ptr& error : errors)
      if (error) std::rethrow_exception(error);
    LoadStats stats;
    for (const ChunkReader& reader : readers) {
      const LoadStats& s = reader.stats();
      stats.bytes_read += s.bytes_read;
      stats.checksum_bytes_read += s.checksum_bytes_read;
      stats.reads += s.reads;
      stats.files_opened += s.files_opened;
    }
    stats.chunks_read = static_cast<int64_t>(needs.size());
    for (ShardWork& w : work_) {
      if (w.buffer.defined() && !w.in_place)
        w.dest.copy_(w.dest.backend() == "cpu" ? w.buffer : w.buffer.to(w.dest.backend()));
      stats.bytes_needed += w.needed;
    }
    for (const auto& set : scalars_) set();
    return stats;
  }

 private:
 private:
  std::string nearby_keys(const std::string& key) const {
    std::vector<std::string> near;
    const std::string prefix = key.substr(0, key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
    for (const auto& [k, e] : metadata_.entries)
      if (!prefix.empty() && k.rfind(prefix, 0) == 0 && near.size() < 8) near.push_back(k);
    return near.empty() ? "" : fmt::format(", among them {}", fmt::join(near, ", "));
  }

  void require_global(const std::string& key, const EntryMeta& e, const Shape& shape,
                      const char* what) const {
    if (e.kind == EntryKind::local)
      throw Error(fmt::format(
          "checkpoint '{}': entry '{}' was saved as a local tensor (one value per rank); it loads "
          "only into a local tensor over the same ranks, not into {}",
          dir_, key, what));
    if (shape != e.shape)
      throw Error(fmt::format(
          "checkpoint '{}': entry '{}' was saved with shape {} but the state dict's {} has shape {}", dir_,
          key, dims_text(e.shape), what, dims_text(shape)));
  }

  void plan_tensor(const std::string& key, const EntryMeta& e, const Tensor& t) {
    if (!t.defined())
      throw Error(fmt::format("checkpoint load: entry '{}' of the state dict is an undefined tensor", key));
    if (!t.is_local()) {
      require_global(key, e, t.sizes(), "tensor");
      add_work(key, e, -1, t, whole(t.sizes()), {});
      return;
    }
    for (const auto& [rank, shard] : t.shards()) {
      if (e.kind != EntryKind::local) {
        // A global tensor: every rank's shard receives all of it.
        require_global(key, e, shard.sizes(), fmt::format("shard of rank {}", rank).c_str());
        add_work(key, e, rank, shard, whole(shard.sizes()), {});
        continue;
      }
      std::vector<int> saved;
      std::optional<size_t> found;
      for (size_t i = 0; i < e.chunks.size(); ++i) {
        for (int r : e.chunks[i].ranks) {
          saved.push_back(r);
          if (r == rank) found = i;
        }
      }
      if (!found)
        throw Error(fmt::format(
            "checkpoint '{}': entry '{}' is a local tensor saved for ranks {{{}}}, which lack rank {} "
            "of the state dict's local tensor; local tensors load only into the ranks they were "
            "saved from",
            dir_, key, fmt::join(saved, ", "), rank));
      if (e.chunks[*found].sizes != shard.sizes())
        throw Error(fmt::format(
            "checkpoint '{}': entry '{}' rank {}: saved with shape {} but the state dict's shard has "
            "shape {}",
            dir_, key, rank, dims_text(e.chunks[*found].sizes), dims_text(shard.sizes())));
      add_work(key, e, rank, shard, whole(shard.sizes()), {*found});
    }
  }

  void plan_dtensor(const std::string& key, const EntryMeta& e, const DTensor& dt) {
    require_global(key, e, dt.shape(), "DTensor");
    const DeviceMesh& mesh = dt.device_mesh();
    for (const Placement& p : dt.placements())
      if (p.is_partial())
        throw Error(
            fmt::format("checkpoint '{}': entry '{}' of the state dict is placed {}; a Partial DTensor holds "
                        "pending sums, not values, so it cannot be loaded into: use Replicate",
                        dir_, key, placements_text(dt.placements())));
    if (mesh.fibres().size() != 1)
      throw Error(
          fmt::format("checkpoint '{}': entry '{}' of the state dict is a DTensor on a sliced mesh with {} "
                      "fibres; each fibre holds a tensor of its own, so one saved tensor cannot fill it",
                      dir_, key, mesh.fibres().size()));
    const Tensor& local = dt.to_local();
    const std::vector<int> ranks = local.is_local() ? local.ranks().ranks() : current_world().ranks().ranks();
    for (int rank : ranks) {
      const Tensor shard = local.is_local() ? local.shard(rank) : local;
      add_work(key, e, rank, shard,
               held_boxes(e.shape, dt.placements(), mesh.shape(), mesh.coordinate_of(rank)), {});
    }
  }

  void add_work(const std::string& key, const EntryMeta& e, int rank, const Tensor& dest,
                std::vector<HeldBox> boxes, std::vector<size_t> chunks) {
    ShardWork w;
    w.key = key;
    w.entry = &e;
    w.rank = rank;
    w.dest = dest;
    w.boxes = std::move(boxes);
    w.chunks = std::move(chunks);
    work_.push_back(std::move(w));
  }

  static std::vector<HeldBox> whole(const Shape& shape) {
    for (int64_t s : shape)
      if (s == 0) return {};
    return {
        HeldBox{Box{std::vector<int64_t>(shape.size(), 0), shape}, std::vector<int64_t>(shape.size(), 0)}};
  }

  // The host bytes a shard is read into: its own when it is a row-major host tensor (in place),
  // else a buffer copied into it after the reads.
  void prepare(ShardWork& w) {
    w.in_place = w.dest.backend() == "cpu" && w.dest.is_contiguous();
    w.buffer = w.in_place ? w.dest : [&] {
      DisabledLocalMode plain;
      return empty(w.dest.sizes(), TensorOptions(w.entry->dtype).backend("cpu"));
    }();
    if (w.buffer.numel() == 0) {
      w.buffer = Tensor();
      return;
    }
    w.buffer.impl()->prepare_write();
    w.bytes = reinterpret_cast<std::byte*>(w.buffer.impl()->bytes_at());
  }

  // What the shard needs of each chunk it intersects, added to `needs`; checks that the chunks
  // cover every box it holds.
  void collect(ShardWork& w, std::map<std::pair<std::string, size_t>, std::vector<RegionCopy>>& needs) {
    if (w.bytes == nullptr) return;
    const EntryMeta& e = *w.entry;
    const Shape& shape = w.dest.sizes();
    const size_t item = itemsize(e.dtype);
    for (const HeldBox& held : w.boxes) {
      // The destination as a box in global coordinates: where its element 0 would lie.
      Box dst_box;
      for (size_t d = 0; d < shape.size(); ++d) {
        dst_box.offsets.push_back(held.global.offsets[d] - held.local_offsets[d]);
        dst_box.sizes.push_back(shape[d]);
      }
      int64_t covered = 0;
      const auto add = [&](size_t index) {
        const ChunkMeta& c = e.chunks[index];
        if (c.sizes.size() != shape.size())
          throw Error(fmt::format(
              "checkpoint '{}': entry '{}' chunk {} has {} dims, the tensor has {}: the metadata is "
              "damaged",
              dir_, w.key, index, c.sizes.size(), shape.size()));
        const std::optional<Box> region = intersect(held.global, Box{c.offsets, c.sizes});
        if (!region) return;
        needs[{w.key, index}].push_back({*region, w.bytes, dst_box});
        covered += region->numel();
      };
      if (!w.chunks.empty()) {
        add(w.chunks[0]);
      } else {
        for (size_t i = 0; i < e.chunks.size(); ++i) add(i);
      }
      if (covered != held.global.numel())
        throw Error(fmt::format(
            "checkpoint '{}': entry '{}': its chunks cover {} of the {} elements of box offsets [{}] "
            "sizes [{}]{}; the metadata is damaged or lists overlapping chunks",
            dir_, w.key, covered, held.global.numel(), fmt::join(held.global.offsets, ", "),
            fmt::join(held.global.sizes, ", "),
            w.rank >= 0 ? fmt::format(" that rank {} holds", w.rank) : std::string()));
      w.needed += held.global.numel() * static_cast<int64_t>(item);
    }
  }

  std::string dir_;
  const Metadata& metadata_;
  std::vector<ShardWork> work_;
  std::vector<std::function<void()>> scalars_;
};

}  // namespace

Metadata read_metadata(const std::string& path) {
  const std::string file = path + "/" + kMetadataFile;
  if (!std::filesystem::exists(file))
    throw Error(fmt::format("checkpoint '{}': there is no checkpoint there ({} is missing{})", path,
                            kMetadataFile,
                            std::filesystem::is_directory(path) ? "" : "; the directory does not exist"));
  return parse_metadata(read_text_file(file), file);
}

LoadStats load(StateDict& state, const std::string& path) {
  if (const world::RunningProgram* program = world::running_program())
    return load_in_rank_program(*program, state, path);
  // The world's async save still in flight is finished (committed) first: it may be this one.
  finish_pending_save(current_world());
  const Metadata metadata = read_metadata(path);
  Loader loader(path, metadata);
  for (auto& [key, value] : state) loader.plan(key, value);
  return loader.run();
}

}  // namespace tessera::dcp
