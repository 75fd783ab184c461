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

namespace tessera::comm {
namespace {

using CacheKey =
    std::tuple<std::string, int32_t, int32_t, int64_t, uint8_t, uint8_t, int32_t, int32_t, std::vector<int32_t>>;

std::mutex cache_mutex;
std::map<CacheKey, std::shared_ptr<const Schedule>> cache;
constexpr size_t kCacheLimit = 4096;  // distinct (shape, algorithm) combinations kept

}  // namespace

std::vector<int32_t> ring_order_of(int world, const std::vector<int>& members);

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

int world_of(const Tensor& tensor) { return tensor.ranks().ranks().back() + 1; }

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
  auto schedule = std::make_shared<const Schedule>(chosen->build(q));
  std::lock_guard lock(cache_mutex);
  if (cache.size() >= kCacheLimit) cache.clear();
  cache.emplace(key, schedule);
  return schedule;
}

// The members' positions round the topology's ring, as group ranks; empty for the natural order.
std::vector<int32_t> ring_order_of(int world, const std::vector<int>& members) {
  // Shortest paths per pair make this costly; a program uses few groups, so remember them.
  static std::mutex mutex;
  static std::map<std::tuple<std::string, int, std::vector<int>>, std::vector<int32_t>> known;
  const Topology topology = default_topology(world);
  const auto key = std::make_tuple(topology.name(), world, members);
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  const std::vector<int> order = topology.ring_order(members);
  std::vector<int32_t> ring;
  bool natural = true;
  for (size_t k = 0; k < order.size(); ++k) {
    const auto at = std::find(members.begin(), members.end(), order[k]);
    ring.push_back(static_cast<int32_t>(at - members.begin()));
    natural = natural && ring.back() == static_cast<int32_t>(k);
  }
  if (natural) ring.clear();
  std::lock_guard lock(mutex);
  if (known.size() >= kCacheLimit) known.clear();
  known.emplace(key, ring);
  return ring;
}

std::vector<Tensor> run_collective(int world, int32_t collective, const std::vector<int>& members,
                                   const std::vector<Tensor>& inputs, int64_t count, int32_t reduce_op, int32_t root) {
  const DType dtype = inputs.front().dtype();
  tessera_collective_request request =
      make_request(collective, static_cast<int>(inputs.size()), count, dtype, reduce_op, root);
  world = std::max(world, *std::max_element(members.begin(), members.end()) + 1);
  const std::vector<int32_t> ring = ring_order_of(world, members);
  request.ring_order = ring.empty() ? nullptr : ring.data();
  const int64_t bytes = static_cast<int64_t>(itemsize(dtype)) * inputs.front().numel();
  const std::shared_ptr<const CollectiveAlgorithm> algorithm = choose(request, bytes);
  const std::shared_ptr<const Schedule> schedule = cached_schedule(algorithm->name(), request);
  if (observe::wants_collectives()) {
    observe::report_collective(*schedule, members, estimate(*schedule, members, default_topology(world), itemsize(dtype)));
  }
  return execute(*schedule, inputs);
}

}  // namespace tessera::comm
