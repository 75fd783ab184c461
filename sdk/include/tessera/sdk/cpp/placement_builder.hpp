// Header-only helper for placement plugins: a strategy table from a C++ layout function.
//
//   static std::vector<tessera_segment> my_layout(int64_t size, int64_t shards, int64_t index) {...}
//   static tessera::sdk::PlacementBuilder mine("my_shard", "M", TESSERA_PLACEMENT_SHARD, &my_layout);
//   plugin.add_placement(mine);
//
// A strategy that takes arguments after the dim ("C(0, 4)", SDK 1.3) gives a check and a layout
// that both receive the argument text; either may throw sdk::Error with a message for the user:
//
//   static void check(const std::string& arguments) { sdk::parse_integer(arguments, "block size", 1); }
//   static std::vector<tessera_segment> cyclic(const std::string& arguments, int64_t size, int64_t shards,
//                                              int64_t index) {...}
//   static tessera::sdk::PlacementBuilder blocks("block_cyclic", "C", &check, &cyclic);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/errors.hpp"
#include "tessera/sdk/cpp/parse.hpp"
#include "tessera/sdk/placement.h"

namespace tessera::sdk {

using LayoutFunction = std::vector<tessera_segment> (*)(int64_t dim_size, int64_t num_shards, int64_t index);
using ArgumentCheck = void (*)(const std::string& arguments);
using ArgumentLayoutFunction = std::vector<tessera_segment> (*)(const std::string& arguments,
                                                                int64_t dim_size, int64_t num_shards,
                                                                int64_t index);

class PlacementBuilder {
 public:
  PlacementBuilder(const char* name, const char* prefix, int32_t kind, LayoutFunction layout = nullptr)
      : layout_(layout) {
    init(name, prefix, kind);
    table_.layout = layout != nullptr ? &layout_entry : nullptr;
  }
  // A shard-like strategy taking arguments (SDK 1.3).
  PlacementBuilder(const char* name, const char* prefix, ArgumentCheck check, ArgumentLayoutFunction layout)
      : check_(check), argument_layout_(layout) {
    init(name, prefix, TESSERA_PLACEMENT_SHARD);
    table_.check_arguments = &check_entry;
    table_.layout_with_arguments = &argument_layout_entry;
  }
  PlacementBuilder(const PlacementBuilder&) = delete;
  PlacementBuilder& operator=(const PlacementBuilder&) = delete;

  const tessera_placement_strategy* table() const { return &table_; }

 private:
  void init(const char* name, const char* prefix, int32_t kind) {
    table_.struct_size = sizeof(table_);
    table_.name = name;
    table_.prefix = prefix;
    table_.kind = kind;
    table_.context = this;
  }

  // The host asks with valid sizes; checked anyway, since a wrong call must not index out of range.
  static void check_request(int64_t dim_size, int64_t num_shards, int64_t index) {
    if (dim_size < 0 || num_shards < 1 || index < 0 || index >= num_shards)
      throw Error(TESSERA_INVALID_ARGUMENT,
                  "layout: need dim_size >= 0, num_shards >= 1, 0 <= index < num_shards");
  }

  static void deliver(const std::vector<tessera_segment>& result, tessera_segment* segments, size_t capacity,
                      size_t* count) {
    *count = result.size();
    if (result.size() > capacity)
      throw Error(TESSERA_INVALID_ARGUMENT, "layout: more segments than the capacity given");
    for (size_t i = 0; i < result.size(); ++i) segments[i] = result[i];
  }

  static tessera_status layout_entry(void* context, int64_t dim_size, int64_t num_shards, int64_t index,
                                     tessera_segment* segments, size_t capacity, size_t* count,
                                     tessera_error* error) {
    return guarded(error, [&] {
      check_request(dim_size, num_shards, index);
      deliver(static_cast<const PlacementBuilder*>(context)->layout_(dim_size, num_shards, index), segments,
              capacity, count);
    });
  }

  static tessera_status check_entry(void* context, const char* arguments, tessera_error* error) {
    return guarded(error, [&] { static_cast<const PlacementBuilder*>(context)->check_(arguments); });
  }

  static tessera_status argument_layout_entry(void* context, const char* arguments, int64_t dim_size,
                                              int64_t num_shards, int64_t index, tessera_segment* segments,
                                              size_t capacity, size_t* count, tessera_error* error) {
    return guarded(error, [&] {
      check_request(dim_size, num_shards, index);
      deliver(static_cast<const PlacementBuilder*>(context)->argument_layout_(arguments, dim_size, num_shards,
                                                                              index),
              segments, capacity, count);
    });
  }

  tessera_placement_strategy table_{};
  LayoutFunction layout_ = nullptr;
  ArgumentCheck check_ = nullptr;
  ArgumentLayoutFunction argument_layout_ = nullptr;
};

}  // namespace tessera::sdk
