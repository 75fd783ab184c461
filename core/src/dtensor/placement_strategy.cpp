#include "dtensor/placement_strategy.hpp"

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera::dtensor {

std::vector<tessera_segment> PlacementStrategy::layout(int64_t dim_size, int64_t num_shards, int64_t index) const {
  std::vector<tessera_segment> segments(4);
  size_t count = 0;
  tessera_error error{};
  error.struct_size = sizeof(error);
  tessera_status status =
      table_->layout(table_->context, dim_size, num_shards, index, segments.data(), segments.size(), &count, &error);
  if (status == TESSERA_INVALID_ARGUMENT && count > segments.size()) {
    segments.resize(count);
    status = table_->layout(table_->context, dim_size, num_shards, index, segments.data(), segments.size(), &count,
                            &error);
  }
  if (status != TESSERA_OK) {
    error.message[sizeof(error.message) - 1] = '\0';
    throw Error(fmt::format("placement '{}' failed to lay out {} elements over {} shards (shard {}): {}", name_,
                            dim_size, num_shards, index, error.message));
  }
  segments.resize(count);
  for (const tessera_segment& s : segments)
    if (s.offset < 0 || s.length < 0 || s.offset + s.length > dim_size)
      throw Error(fmt::format("placement '{}' returned segment [{}, {}) outside a dim of {} elements", name_, s.offset,
                              s.offset + s.length, dim_size));
  return segments;
}

}  // namespace tessera::dtensor
