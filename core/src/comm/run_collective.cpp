#include "comm/run_collective.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "comm/cost_model.hpp"
#include "comm/executor.hpp"
#include "comm/selection.hpp"
#include "dispatch/backend.hpp"
#include "observe/comm_events.hpp"
#include "plugin/registry.hpp"
#include "tessera/errors.hpp"
#include "tessera/topology.hpp"
#include "world/world.hpp"

namespace tessera::comm {
namespace {

using CacheKey =
    std::tuple<std::string, int32_t, int32_t, int64_t, uint8_t, uint8_t, int32_t, int32_t, std::vector<int32_t>>;

std::mutex cache_mutex;
std::map<CacheKey, std::shared_ptr<const Schedule>> cache;
constexpr size_t kCacheLimit = 4096;  // distinct (shape, algorithm) combinations kept

}  // namespace

int32_t schedule_reduce_op(const ReduceOp& op) {
  switch (op.kind()) {
    case ReduceOp::PRODUCT: return TESSERA_REDUCE_PRODUCT;
    case ReduceOp::MIN: return TESSERA_REDUCE_MIN;
    case ReduceOp::MAX: return TESSERA_REDUCE_MAX;
    case ReduceOp::BAND: return TESSERA_REDUCE_BAND;
    case ReduceOp::BOR: return TESSERA_REDUCE_BOR;
    case ReduceOp::BXOR: return TESSERA_REDUCE_BXOR;
    default: return TESSERA_REDUCE_SUM;
  }
}

int world_of(const Tensor& tensor) {
  const int extent = tensor.ranks().ranks().back() + 1;
  const world::WorldState& w = world::current();
  if (!w.sized()) return extent;
  if (extent > w.size())
    throw Error(fmt::format("the tensor has rank {} but the calling thread's world has {} rank(s) (0..{}); use it "
                            "in the mode (world) it was made in",
                            extent - 1, w.size(), w.size() - 1));
  return w.size();
}

tessera_collective_request make_request(int32_t collective, int group_size, int64_t count, DType dtype,
                                        int32_t reduce_op, int32_t root) {
  tessera_collective_request request{};
  request.struct_size = sizeof(request);
  request.collective = collective;
  request.group_size = group_size;
  request.count = count;
  request.dtype = dispatch::to_dl(dtype);
  request.reduce_op = reduce_op;
  request.root = root;
  return request;
}

std::shared_ptr<const Schedule> cached_schedule(const std::string& algorithm, const tessera_collective_request& q) {
  std::vector<int32_t> ring;
  if (q.ring_order != nullptr) ring.assign(q.ring_order, q.ring_order + q.group_size);
  const CacheKey key{algorithm, q.collective, q.group_size, q.count, q.dtype.code, q.dtype.bits, q.reduce_op, q.root,
                     ring};
  {
    std::lock_guard lock(cache_mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::shared_ptr<const CollectiveAlgorithm> chosen = plugin::Registry::instance().algorithm(algorithm);
  if (chosen == nullptr) throw Error(fmt::format("no collective algorithm named '{}' is loaded", algorithm));
  // build() verifies the schedule: only schedules the checker accepted are cached and executed.
  auto schedule = std::make_shared<const Schedule>(chosen->build(q));
  std::lock_guard lock(cache_mutex);
  if (cache.size() >= kCacheLimit) cache.clear();
  cache.emplace(key, schedule);
  return schedule;
}

void forget_schedules(const std::string& algorithm) {
  std::lock_guard lock(cache_mutex);
  std::erase_if(cache, [&](const auto& entry) { return std::get<0>(entry.first) == algorithm; });
}

std::vector<Tensor> run_collective(const CallContext& context, int32_t collective, const std::vector<int>& members,
                                   const std::vector<Tensor>& inputs, int64_t count, int32_t reduce_op, int32_t root) {
  const auto hosted = std::find_if(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.defined(); });
  if (hosted == inputs.end()) throw Error("run_collective: no member of the group is hosted here (internal error)");
  const DType dtype = hosted->dtype();
  int world = context.world;
  tessera_collective_request request =
      make_request(collective, static_cast<int>(inputs.size()), count, dtype, reduce_op, root);
  world = std::max(world, *std::max_element(members.begin(), members.end()) + 1);
  tessera::world::WorldState& in = tessera::world::current();  // `world` is the size here
  const std::vector<int32_t> ring = in.ring_order(world, members);
  request.ring_order = ring.empty() ? nullptr : ring.data();
  const int64_t bytes = static_cast<int64_t>(itemsize(dtype)) * hosted->numel();
  const std::shared_ptr<const CollectiveAlgorithm> algorithm = choose(request, bytes);
  const std::shared_ptr<const Schedule> schedule = cached_schedule(algorithm->name(), request);
  if (observe::wants_collectives()) {
    observe::report_collective(*schedule, members, estimate(*schedule, members, in.topology(world), itemsize(dtype)));
  }
  return execute(*schedule, inputs, ExecutionPlace{&in, &members, context.call});
}

}  // namespace tessera::comm
