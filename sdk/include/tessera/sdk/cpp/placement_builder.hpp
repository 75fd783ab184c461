// Header-only helper for placement plugins: a strategy table from a C++ layout function.
//
//   static std::vector<tessera_segment> my_layout(int64_t size, int64_t shards, int64_t index) {...}
//   static tessera::sdk::PlacementBuilder mine("my_shard", "M", TESSERA_PLACEMENT_SHARD, &my_layout);
//   plugin.add_placement(mine);
#pragma once

#include <vector>

#include "tessera/sdk/cpp/errors.hpp"
#include "tessera/sdk/placement.h"

namespace tessera::sdk {

using LayoutFunction = std::vector<tessera_segment> (*)(int64_t dim_size, int64_t num_shards, int64_t index);

class PlacementBuilder {
 public:
  PlacementBuilder(const char* name, const char* prefix, int32_t kind, LayoutFunction layout = nullptr)
      : layout_(layout) {
    table_.struct_size = sizeof(table_);
    table_.name = name;
    table_.prefix = prefix;
    table_.kind = kind;
    table_.context = this;
    table_.layout = layout != nullptr ? &layout_entry : nullptr;
  }
  PlacementBuilder(const PlacementBuilder&) = delete;
  PlacementBuilder& operator=(const PlacementBuilder&) = delete;

  const tessera_placement_strategy* table() const { return &table_; }

 private:
  static tessera_status layout_entry(void* context, int64_t dim_size, int64_t num_shards, int64_t index,
                                     tessera_segment* segments, size_t capacity, size_t* count, tessera_error* error) {
    return guarded(error, [&] {
      if (dim_size < 0 || num_shards < 1 || index < 0 || index >= num_shards)
        throw Error(TESSERA_INVALID_ARGUMENT, "layout: need dim_size >= 0, num_shards >= 1, 0 <= index < num_shards");
      const std::vector<tessera_segment> result =
          static_cast<const PlacementBuilder*>(context)->layout_(dim_size, num_shards, index);
      *count = result.size();
      if (result.size() > capacity)
        throw Error(TESSERA_INVALID_ARGUMENT, "layout: more segments than the capacity given");
      for (size_t i = 0; i < result.size(); ++i) segments[i] = result[i];
    });
  }

  tessera_placement_strategy table_{};
  LayoutFunction layout_;
};

}  // namespace tessera::sdk
