#include "dtensor/placement_strategy.hpp"

#include <fmt/format.h>

#include "plugin/guarded_call.hpp"
#include "plugin/validation.hpp"
#include "tessera/errors.hpp"

namespace tessera::dtensor {

std::vector<tessera_segment> PlacementStrategy::layout(int64_t dim_size, int64_t num_shards, int64_t index) const {
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
