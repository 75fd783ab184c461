#include "checkpoint/world_sync.hpp"

#include <fmt/format.h>

#include "tessera/dist.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"

namespace tessera::dcp {

WorldSync::WorldSync(const World& world) {
  if (world.num_processes() > 1) world_ = world;
}

bool WorldSync::exchange(bool failed) {
  if (!world_) return failed;
  LocalMode mode(*world_);
  Tensor flag = full({}, failed ? 1 : 0, kInt32);
  dist::all_reduce(flag, ReduceOp::MAX);
  return flag.shard(world_->ranks()[0]).item<int>() != 0;
}

int64_t WorldSync::max_over_processes(int64_t value) {
  if (!world_) return value;
  LocalMode mode(*world_);
  Tensor values = full({}, value, kInt64);
  dist::all_reduce(values, ReduceOp::MAX);
  return values.shard(world_->ranks()[0]).item<int64_t>();
}

void WorldSync::require_all_ok(const std::string& failure, const char* step) {
  const bool any = exchange(!failure.empty());
  if (!failure.empty()) throw Error(fmt::format("checkpoint save: {}: {}", step, failure));
  if (any)
    throw Error(fmt::format("checkpoint save: another process failed {}; nothing was committed", step));
}

}  // namespace tessera::dcp
