// A placement-strategy component as the core uses it.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plugin/loaded_plugin.hpp"
#include "tessera/sdk/placement.h"

namespace tessera::dtensor {

class PlacementStrategy {
 public:
  PlacementStrategy(const tessera_placement_strategy* table, std::shared_ptr<const plugin::LoadedPlugin> owner)
      : table_(table), owner_(std::move(owner)), name_(table->name), prefix_(table->prefix) {}

  const std::string& name() const { return name_; }
  const std::string& prefix() const { return prefix_; }
  int32_t kind() const { return table_->kind; }
  const plugin::LoadedPlugin& plugin() const { return *owner_; }
  // The segments shard `index` of `num_shards` holds of a dim of `dim_size`; checked to be in
  // bounds, and, the first time this (dim_size, num_shards) is asked for, all shards' segments
  // together to cover [0, dim_size) exactly once (a plugin bug is reported, not trusted).
  std::vector<tessera_segment> layout(int64_t dim_size, int64_t num_shards, int64_t index) const;

 private:
  std::vector<tessera_segment> shard_layout(int64_t dim_size, int64_t num_shards, int64_t index) const;
  void check_coverage(int64_t dim_size, int64_t num_shards) const;

  // The (dim_size, num_shards) whose coverage was checked; only grows.
  mutable std::mutex covered_mutex_;
  mutable std::set<std::pair<int64_t, int64_t>> covered_;
  const tessera_placement_strategy* table_;
  std::shared_ptr<const plugin::LoadedPlugin> owner_;
  std::string name_;
  std::string prefix_;
};

}  // namespace tessera::dtensor
