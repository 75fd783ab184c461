#include "dtensor/placement_strategy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "plugin/guarded_call.hpp"
#include "plugin/validation.hpp"
#include "tessera/errors.hpp"

namespace tessera::dtensor {

std::vector<tessera_segment> PlacementStrategy::layout(int64_t dim_size, int64_t num_shards, int64_t index) const {
  std::vector<tessera_segment> segments = shard_layout(dim_size, num_shards, index);
  if (num_shards < 1 || index < 0 || index >= num_shards) return segments;  // the plugin's to refuse
  bool checked = false;
  {
    std::lock_guard lock(covered_mutex_);
    checked = covered_.count({dim_size, num_shards}) != 0;
  }
  // Outside the lock: two threads may both check a new pair, which costs time, not correctness.
  if (!checked) check_coverage(dim_size, num_shards);
  return segments;
}

// Every element of the dim held by exactly one shard: the segments of all shards, sorted by
// offset, must follow each other without a hole or a shared element.
void PlacementStrategy::check_coverage(int64_t dim_size, int64_t num_shards) const {
  struct Held {
    int64_t offset;
    int64_t end;
    int64_t shard;
  };
  std::vector<Held> held;
  for (int64_t shard = 0; shard < num_shards; ++shard)
    for (const tessera_segment& s : shard_layout(dim_size, num_shards, shard))
      if (s.length > 0) held.push_back({s.offset, s.offset + s.length, shard});
  std::sort(held.begin(), held.end(), [](const Held& a, const Held& b) { return a.offset < b.offset; });
  const std::string where =
      fmt::format("placement '{}' laid out {} elements over {} shards", name_, dim_size, num_shards);
  int64_t covered_to = 0;
  const Held* last = nullptr;
  for (const Held& h : held) {
    if (h.offset > covered_to)
      throw Error(fmt::format("{} with a gap: no shard holds elements [{}, {}); each element must be held by "
                              "exactly one shard",
                              where, covered_to, h.offset));
    if (h.offset < covered_to)
      throw Error(fmt::format("{} with an overlap: elements [{}, {}) are held by shard {} and shard {}; each "
                              "element must be held by exactly one shard",
                              where, h.offset, std::min(h.end, covered_to), last->shard, h.shard));
    covered_to = h.end;
    last = &h;
  }
  if (covered_to < dim_size)
    throw Error(fmt::format("{} with a gap: no shard holds elements [{}, {}); each element must be held by exactly "
                            "one shard",
                            where, covered_to, dim_size));
  std::lock_guard lock(covered_mutex_);
  covered_.insert({dim_size, num_shards});
}

std::vector<tessera_segment> PlacementStrategy::shard_layout(int64_t dim_size, int64_t num_shards,
                                                             int64_t index) const {
  std::vector<tessera_segment> segments(4);
  size_t count = 0;
  tessera_error error{};
  error.struct_size = sizeof(error);
  tessera_status status = TESSERA_INTERNAL;
  const auto call_layout = [&] {
    status = table_->layout(table_->context, dim_size, num_shards, index, segments.data(), segments.size(), &count,
                            &error);
  };
  std::string escaped = plugin::exception_escaping("layout", call_layout);
  if (escaped.empty() && status == TESSERA_INVALID_ARGUMENT && count > segments.size()) {
    segments.resize(count);
    escaped = plugin::exception_escaping("layout", call_layout);
  }
  if (!escaped.empty() || status != TESSERA_OK)
    throw Error(fmt::format("placement '{}' failed to lay out {} elements over {} shards (shard {}): {}", name_,
                            dim_size, num_shards, index, escaped.empty() ? plugin::error_text(error) : escaped));
  if (count > segments.size())
    throw Error(fmt::format("placement '{}' reported {} segments for shard {} of {} but had room for {}", name_, count,
                            index, num_shards, segments.size()));
  segments.resize(count);
  for (const tessera_segment& s : segments)
    if (s.offset < 0 || s.length < 0 || s.offset > dim_size || s.length > dim_size - s.offset)
      throw Error(fmt::format("placement '{}' returned segment (offset {}, length {}) outside a dim of {} elements",
                              name_, s.offset, s.length, dim_size));
  return segments;
}

}  // namespace tessera::dtensor
