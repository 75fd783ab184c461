#include "dtensor/placement_strategy.hpp"

#include <algorithm>
#include <cstddef>

#include <fmt/format.h>

#include "plugin/guarded_call.hpp"
#include "plugin/validation.hpp"
#include "tessera/errors.hpp"

namespace tessera::dtensor {

bool PlacementStrategy::takes_arguments() const {
  // A table from before SDK 1.3 ends before the argument functions: it takes none.
  return table_->struct_size >= offsetof(tessera_placement_strategy, layout_with_arguments) + sizeof(void*) &&
         table_->check_arguments != nullptr && table_->layout_with_arguments != nullptr;
}

void PlacementStrategy::check_arguments(const std::string& arguments,
                                        const std::string& placement_text) const {
  if (!takes_arguments()) {
    if (arguments.empty()) return;
    throw Error(fmt::format("placement '{}': strategy '{}' takes no arguments after the tensor dim, got '{}'",
                            placement_text, name_, arguments));
  }
  tessera_error error{};
  error.struct_size = sizeof(error);
  tessera_status status = TESSERA_INTERNAL;
  const auto call_check = [&] {
    status = table_->check_arguments(table_->context, arguments.c_str(), &error);
  };
  if (std::string escaped = plugin::exception_escaping("check_arguments", call_check); !escaped.empty())
    throw Error(fmt::format("placement '{}': strategy '{}' of plugin '{}' failed checking arguments '{}': {}",
                            placement_text, name_, owner_->info().name, arguments, escaped));
  if (status != TESSERA_OK)
    throw Error(fmt::format("placement '{}': strategy '{}' refuses arguments '{}': {}", placement_text, name_,
                            arguments, plugin::error_text(error)));
}

std::vector<tessera_segment> PlacementStrategy::layout(int64_t dim_size, int64_t num_shards, int64_t index,
                                                       const std::string& arguments) const {
  const Layout key{arguments, dim_size, num_shards};
  if (num_shards < 1 || index < 0 || index >= num_shards)
    return shard_layout(key, index);  // the plugin's to refuse
  {
    std::lock_guard lock(checked_mutex_);
    if (auto it = checked_.find(key); it != checked_.end()) return (*it->second)[static_cast<size_t>(index)];
  }
  // The shard asked for first, so that a plugin's failure names it; then every shard, checked.
  std::vector<tessera_segment> segments = shard_layout(key, index);
  check_coverage(key);
  return segments;
}

std::shared_ptr<const std::vector<std::vector<tessera_segment>>> PlacementStrategy::layouts(
    int64_t dim_size, int64_t num_shards, const std::string& arguments) const {
  const Layout key{arguments, dim_size, num_shards};
  if (num_shards < 1) shard_layout(key, 0);  // the plugin's to refuse
  {
    std::lock_guard lock(checked_mutex_);
    if (auto it = checked_.find(key); it != checked_.end()) return it->second;
  }
  return check_coverage(key);
}

std::string PlacementStrategy::describe(const Layout& layout) const {
  const auto& [arguments, dim_size, num_shards] = layout;
  return fmt::format("placement '{}'{} laid out {} elements over {} shards", name_,
                     arguments.empty() ? "" : fmt::format(" (arguments '{}')", arguments), dim_size,
                     num_shards);
}

// Every element of the dim held by exactly one shard: the segments of all shards, sorted by
// offset, must follow each other without a hole or a shared element.
std::shared_ptr<const PlacementStrategy::AllShards> PlacementStrategy::check_coverage(
    const Layout& layout) const {
  struct Held {
    int64_t offset;
    int64_t end;
    int64_t shard;
  };
  const int64_t dim_size = std::get<1>(layout);
  const int64_t num_shards = std::get<2>(layout);
  AllShards all;
  all.reserve(static_cast<size_t>(num_shards));
  std::vector<Held> held;
  for (int64_t shard = 0; shard < num_shards; ++shard) {
    all.push_back(shard_layout(layout, shard));
    for (const tessera_segment& s : all.back())
      if (s.length > 0) held.push_back({s.offset, s.offset + s.length, shard});
  }
  std::sort(held.begin(), held.end(), [](const Held& a, const Held& b) { return a.offset < b.offset; });
  const std::string where = describe(layout);
  int64_t covered_to = 0;
  const Held* last = nullptr;
  for (const Held& h : held) {
    if (h.offset > covered_to)
      throw Error(
          fmt::format("{} with a gap: no shard holds elements [{}, {}); each element must be held by "
                      "exactly one shard",
                      where, covered_to, h.offset));
    if (h.offset < covered_to)
      throw Error(
          fmt::format("{} with an overlap: elements [{}, {}) are held by shard {} and shard {}; each "
                      "element must be held by exactly one shard",
                      where, h.offset, std::min(h.end, covered_to), last->shard, h.shard));
    covered_to = h.end;
    last = &h;
  }
  if (covered_to < dim_size)
    throw Error(
        fmt::format("{} with a gap: no shard holds elements [{}, {}); each element must be held by exactly "
                    "one shard",
                    where, covered_to, dim_size));
  // Two threads may both check a new layout (outside the lock: it calls the plugin); the first
  // kept wins, and both are the plugin's answer.
  std::lock_guard lock(checked_mutex_);
  return checked_.try_emplace(layout, std::make_shared<const AllShards>(std::move(all))).first->second;
}

std::vector<tessera_segment> PlacementStrategy::shard_layout(const Layout& layout, int64_t index) const {
  // Plain references, not structured bindings: a lambda below uses them, which C++20 clang refuses
  // for bindings.
  const std::string& arguments = std::get<0>(layout);
  const int64_t dim_size = std::get<1>(layout);
  const int64_t num_shards = std::get<2>(layout);
  std::vector<tessera_segment> segments(4);
  size_t count = 0;
  tessera_error error{};
  error.struct_size = sizeof(error);
  tessera_status status = TESSERA_INTERNAL;
  const bool with_arguments = takes_arguments();
  if (!with_arguments && !arguments.empty())  // Placement checks this first; kept for direct callers
    throw Error(fmt::format("placement '{}' takes no arguments, got '{}'", name_, arguments));
  const auto call_layout = [&] {
    status = with_arguments
                 ? table_->layout_with_arguments(table_->context, arguments.c_str(), dim_size, num_shards,
                                                 index, segments.data(), segments.size(), &count, &error)
                 : table_->layout(table_->context, dim_size, num_shards, index, segments.data(),
                                  segments.size(), &count, &error);
  };
  std::string escaped = plugin::exception_escaping("layout", call_layout);
  if (escaped.empty() && status == TESSERA_INVALID_ARGUMENT && count > segments.size()) {
    segments.resize(count);
    escaped = plugin::exception_escaping("layout", call_layout);
  }
  if (!escaped.empty() || status != TESSERA_OK)
    throw Error(fmt::format("placement '{}'{} failed to lay out {} elements over {} shards (shard {}): {}",
                            name_, arguments.empty() ? "" : fmt::format(" (arguments '{}')", arguments),
                            dim_size, num_shards, index,
                            escaped.empty() ? plugin::error_text(error) : escaped));
  if (count > segments.size())
    throw Error(fmt::format("placement '{}' reported {} segments for shard {} of {} but had room for {}",
                            name_, count, index, num_shards, segments.size()));
  segments.resize(count);
  for (const tessera_segment& s : segments)
    if (s.offset < 0 || s.length < 0 || s.offset > dim_size || s.length > dim_size - s.offset)
      throw Error(
          fmt::format("placement '{}' returned segment (offset {}, length {}) outside a dim of {} elements",
                      name_, s.offset, s.length, dim_size));
  return segments;
}

}  // namespace tessera::dtensor
