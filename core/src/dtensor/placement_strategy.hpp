// A placement-strategy component as the core uses it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plugin/loaded_plugin.hpp"
#include "tessera/sdk/placement.h"

namespace tessera::dtensor {

class PlacementStrategy {
 public:
  PlacementStrategy(const tessera_placement_strategy* table,
                    std::shared_ptr<const plugin::LoadedPlugin> owner)
      : table_(table), owner_(std::move(owner)), name_(table->name), prefix_(table->prefix) {}

  const std::string& name() const { return name_; }
  const std::string& prefix() const { return prefix_; }
  int32_t kind() const { return table_->kind; }
  const plugin::LoadedPlugin& plugin() const { return *owner_; }
  // Whether the strategy takes text arguments after the dim ("C(0, 4)"; SDK 1.3).
  bool takes_arguments() const;
  // Throws an Error naming `placement_text` and the plugin's message when the strategy refuses
  // `arguments`, or takes none and `arguments` is not empty.
  void check_arguments(const std::string& arguments, const std::string& placement_text) const;
  // The segments shard `index` of `num_shards` holds of a dim of `dim_size`; checked to be in
  // bounds, and, the first time this (arguments, dim_size, num_shards) is asked for, all shards'
  // segments together to cover [0, dim_size) exactly once (a plugin bug is reported, not trusted).
  std::vector<tessera_segment> layout(int64_t dim_size, int64_t num_shards, int64_t index,
                                      const std::string& arguments = {}) const;
  // Every shard's segments (entry k: shard k's), checked as layout() checks them; num_shards >= 1.
  // Held by the caller (a plugin may be unloaded meanwhile). Asked once of the plugin per (arguments,
  // dim_size, num_shards) and kept: a DTensor's every rank asks for the layout of its coordinate, and every
  // rank of a mesh dim asks for the same.
  std::shared_ptr<const std::vector<std::vector<tessera_segment>>> layouts(
      int64_t dim_size, int64_t num_shards, const std::string& arguments = {}) const;

 private:
  using Layout = std::tuple<std::string, int64_t, int64_t>;  // arguments, dim size, shards
  using AllShards = std::vector<std::vector<tessera_segment>>;
  std::vector<tessera_segment> shard_layout(const Layout& layout, int64_t index) const;
  // Every shard's segments, checked to cover the dim exactly once, then kept in checked_.
  std::shared_ptr<const AllShards> check_coverage(const Layout& layout) const;
  std::string describe(const Layout& layout) const;

  // The layouts whose coverage was checked, with every shard's segments; only grows.
  mutable std::mutex checked_mutex_;
  mutable std::map<Layout, std::shared_ptr<const AllShards>> checked_;
  const tessera_placement_strategy* table_;
  std::shared_ptr<const plugin::LoadedPlugin> owner_;
  std::string name_;
  std::string prefix_;
};

}  // namespace tessera::dtensor
