// A placement-strategy component as the core uses it.
#pragma once

#include <memory>
#include <string>
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
  // bounds (a plugin bug is reported, not trusted).
  std::vector<tessera_segment> layout(int64_t dim_size, int64_t num_shards, int64_t index) const;

 private:
  const tessera_placement_strategy* table_;
  std::shared_ptr<const plugin::LoadedPlugin> owner_;
  std::string name_;
  std::string prefix_;
};

}  // namespace tessera::dtensor
