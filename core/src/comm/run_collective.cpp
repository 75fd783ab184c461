#include "comm/run_collective.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/closed_form_plan.hpp"
#include "comm/collective_path.hpp"
#include "comm/comm_observer.hpp"
#include "comm/components.hpp"
#include "comm/cost_model.hpp"
#include "comm/executor.hpp"
#include "comm/in_place.hpp"
#include "comm/plan_evaluator.hpp"
#include "comm/request_key.hpp"
#include "comm/request_topology.hpp"
#include "comm/schedule_plan.hpp"
#include "comm/selection.hpp"
#include "comm/shapes_only.hpp"
#include "dispatch/backend.hpp"
#include "tensor/local_tensor_impl.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "tessera/topology.hpp"
#include "world/world.hpp"

namespace tessera::comm {
namespace {

// A schedule and, once a simulated world first runs it, its plan (derived at most once), and once
// a call is reported, its estimated cost. The cost depends on the schedule, the element size and
// the group's topology, all of which the entry's key fixes (request_key.hpp: the dtype, the
// topology's fingerprint, and the members unless every group of this size sees the same topology).
// When the plan is known in closed form (closed_form_plan.hpp) the schedule is built only when
// something needs its steps (a report, a replay, a cost); any request with the entry's key builds it,
// as the key fixes everything an algorithm reads.
struct Cached {
  // By name, not by pointer: an entry kept by a thread's last choice must not keep an unloaded
  // plugin mapped (its schedules are forgotten then, and choices made anew).
  std::string algorithm;
  bool closed_form = false;
  tessera_collective_request request{};  // its pointers cleared: they do not outlive the call
  std::vector<int32_t> ring_order;       // the request's, which a closed-form plan may follow
  std::once_flag scheduled;
  std::shared_ptr<const Schedule> schedule;
  std::atomic<bool> has_schedule{false};  // set once `schedule` is
  std::once_flag planned;
  std::shared_ptr<const SchedulePlan> plan;
  std::once_flag costed;
  CostEstimate cost;
};

std::mutex cache_mutex;
std::map<CacheKey, std::shared_ptr<Cached>, KeyLess> cache;
constexpr size_t kCacheLimit = 4096;  // distinct (shape, algorithm) combinations kept

void build_schedule(Cached& entry, const CollectiveAlgorithm& algorithm,
                    const tessera_collective_request& q) {
  std::call_once(entry.scheduled, [&] {
    // build() verifies the schedule: only schedules the checker accepted are cached and executed.
    Schedule built = algorithm.build(q);
    built.in_place = runs_in_place(built);
    entry.schedule = std::make_shared<const Schedule>(std::move(built));
    entry.has_schedule.store(true, std::memory_order_release);
  });
}

// The entry's schedule, built by `q` (a request with the entry's key) when first needed.
const Schedule& schedule_of(Cached& entry, const tessera_collective_request& q) {
  if (!entry.has_schedule.load(std::memory_order_acquire)) {
    const std::shared_ptr<const CollectiveAlgorithm> algorithm = comm::algorithm(entry.algorithm);
    if (algorithm == nullptr)
      throw Error(fmt::format("no collective algorithm named '{}' is loaded", entry.algorithm));
    build_schedule(entry, *algorithm, q);
  }
  return *entry.schedule;
}

std::shared_ptr<Cached> cached(const std::string& algorithm, const tessera_collective_request& q) {
  const KeyView probe = view_of(algorithm, q);
  {
    std::lock_guard lock(cache_mutex);
    if (auto it = cache.find(probe); it != cache.end()) return it->second;
  }
  std::shared_ptr<const CollectiveAlgorithm> chosen = comm::algorithm(algorithm);
  if (chosen == nullptr) throw Error(fmt::format("no collective algorithm named '{}' is loaded", algorithm));
  auto entry = std::make_shared<Cached>();
  entry->algorithm = algorithm;
  entry->closed_form = has_closed_form_plan(*chosen, q);
  entry->request = q;
  if (q.ring_order != nullptr) entry->ring_order.assign(q.ring_order, q.ring_order + q.group_size);
  entry->request.ring_order = nullptr;
  entry->request.group_ranks = nullptr;
  entry->request.topology = nullptr;
  entry->request.locality = nullptr;
  entry->request.transfer_time = nullptr;
  // Built (and so verified) before the entry is cached, so a wrong schedule is never cached.
  if (!entry->closed_form) build_schedule(*entry, *chosen, q);
  std::lock_guard lock(cache_mutex);
  if (cache.size() >= kCacheLimit) cache.clear();
  cache.emplace(CacheKey(probe), entry);
  return entry;
}

const CostEstimate& cost_of(Cached& entry, const tessera_collective_request& q,
                            const std::vector<int>& members, const Topology& topology, size_t itemsize) {
  std::call_once(entry.costed,
                 [&] { entry.cost = estimate(schedule_of(entry, q), members, topology, itemsize); });
  return entry.cost;
}

const std::shared_ptr<const SchedulePlan>& plan_of(Cached& entry) {
  std::call_once(entry.planned, [&] {
    if (entry.closed_form) {
      tessera_collective_request request = entry.request;
      if (!entry.ring_order.empty()) request.ring_order = entry.ring_order.data();
      entry.plan = std::make_shared<const SchedulePlan>(closed_form_plan(entry.algorithm, request));
    } else {
      entry.plan = std::make_shared<const SchedulePlan>(derive_plan(*entry.schedule));
    }
  });
  return entry.plan;
}

}  // namespace

int32_t schedule_reduce_op(const ReduceOp& op) {
  switch (op.kind()) {
    case ReduceOp::PRODUCT:
      return TESSERA_REDUCE_PRODUCT;
    case ReduceOp::MIN:
      return TESSERA_REDUCE_MIN;
    case ReduceOp::MAX:
      return TESSERA_REDUCE_MAX;
    case ReduceOp::BAND:
      return TESSERA_REDUCE_BAND;
    case ReduceOp::BOR:
      return TESSERA_REDUCE_BOR;
    case ReduceOp::BXOR:
      return TESSERA_REDUCE_BXOR;
    default:
      return TESSERA_REDUCE_SUM;
  }
}

int world_of(const Tensor& tensor) {
  // The local tensor's own rank set, not a copy (every collective call asks); for a tensor that is
  // not local, ranks() throws the error naming the problem.
  const LocalTensorImpl* local = tensor.local_impl().get();
  const int extent = (local != nullptr ? local->ranks().ranks().back() : tensor.ranks().ranks().back()) + 1;
  const world::WorldState& w = world::current();
  if (!w.sized()) return extent;
  if (extent > w.size())
    throw Error(
        fmt::format("the tensor has rank {} but the calling thread's world has {} rank(s) (0..{}); use it "
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

std::shared_ptr<const Schedule> cached_schedule(const std::string& algorithm,
                                                const tessera_collective_request& q) {
  const std::shared_ptr<Cached> entry = cached(algorithm, q);
  schedule_of(*entry, q);
  return entry->schedule;
}

std::shared_ptr<const SchedulePlan> cached_plan(const std::string& algorithm,
                                                const tessera_collective_request& q) {
  return plan_of(*cached(algorithm, q));
}

void forget_schedules(const std::string& algorithm) {
  {
    std::lock_guard lock(cache_mutex);
    std::erase_if(cache, [&](const auto& entry) { return entry.first.algorithm == algorithm; });
  }
  // Choices made by "auto" may rest on the forgotten algorithm (or its old parameters).
  note_algorithms_changed();
}

namespace {

// The calling thread's last choice and what it rested on. A training loop makes the same call
// again and again: a repeat skips the topology, the rules and the schedule cache (about a third of
// a small collective's cost across processes). Everything a choice depends on is either compared
// here or changes algorithms_generation (algorithms loaded or forgotten, rules or the topology
// preset set). Per thread, so threads never contend on it. The topology is the group's own, compared
// by content (Topology::fingerprint), or else the world's: the preset over the world's size, and in
// a world spread over processes its links between processes (WorldState::links_key).
struct LastChoice {
  uint64_t generation = 0;
  std::array<int64_t, 7> fields{};  // the request's (request_key.hpp's fields_of)
  int world = 0;
  int64_t bytes = 0;
  std::vector<int> members;
  bool own_topology = false;
  uint64_t topology = 0;  // the group's topology's fingerprint, else the world's links_key
  std::shared_ptr<Cached> entry;

  bool matches(uint64_t now, const tessera_collective_request& q, int asked_world, int64_t asked_bytes,
               const std::vector<int>& group, bool asked_own, uint64_t asked_topology) const {
    return entry != nullptr && generation == now && fields == fields_of(q) && world == asked_world &&
           bytes == asked_bytes && own_topology == asked_own && topology == asked_topology &&
           members == group;
  }
};
thread_local LastChoice last_choice;

bool evaluates_plans_in(const tessera::world::WorldState& world) {
  return !world.distributed() && !replay_forced();
}

// A group's own topology must hold every member (DeviceMesh::with_topology and
// ProcessGroup::with_topology check their fibres; the default group's members are known only here).
void require_spans(const Topology& topology, int largest_member) {
  if (largest_member >= topology.world())
    throw Error(
        fmt::format("the group's topology '{}' spans {} ranks (0..{}) but the collective runs on rank {}",
                    topology.name(), topology.world(), topology.world() - 1, largest_member));
}

// What run_collective and repeat_collective share: choose the algorithm, fetch its schedule and
// report the call (traces, counters and the cost model see one call per fibre either way).
std::shared_ptr<Cached> chosen_and_reported(const CallContext& context, int32_t collective,
                                            const std::vector<int>& members,
                                            const std::vector<Tensor>& inputs, int64_t count,
                                            int32_t reduce_op, int32_t root) {
  const auto hosted = std::find_if(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.defined(); });
  if (hosted == inputs.end())
    throw Error("run_collective: no member of the group is hosted here (internal error)");
  const DType dtype = hosted->dtype();
  const int64_t bytes = static_cast<int64_t>(itemsize(dtype)) * hosted->numel();
  const bool reported = wants_collectives();  // a report needs the topology: no shortcut then
  const uint64_t generation = algorithms_generation();
  tessera_collective_request request =
      make_request(collective, static_cast<int>(inputs.size()), count, dtype, reduce_op, root);
  tessera::world::WorldState& in = tessera::world::current();
  const Topology* own = context.topology.get();
  const uint64_t topology_key = own != nullptr ? own->fingerprint() : in.links_key();
  // A replay needs the schedule's steps, which an entry with a closed-form plan builds only then.
  const bool replays = !evaluates_plans_in(in);
  if (!reported &&
      last_choice.matches(generation, request, context.world, bytes, members, own != nullptr, topology_key) &&
      (!replays || last_choice.entry->has_schedule.load(std::memory_order_acquire)))
    return last_choice.entry;
  const int largest = *std::max_element(members.begin(), members.end());
  Topology world_topology;  // filled only when the group brings none
  const Topology* topology = own;
  std::vector<int32_t> ring;
  if (own != nullptr) {
    require_spans(*own, largest);
    ring = in.ring_order_on(*own, members);
  } else {
    ring = in.ring_order(std::max(context.world, largest + 1), members, world_topology);
    topology = &world_topology;
  }
  request.ring_order = ring.empty() ? nullptr : ring.data();
  const RequestTopology where{topology, members.data(), request.group_size};
  attach_topology(request, where);
  const std::shared_ptr<const CollectiveAlgorithm> algorithm = choose(request, bytes);
  std::shared_ptr<Cached> entry = cached(algorithm->name(), request);
  if (reported || replays) schedule_of(*entry, request);
  if (reported)
    report_collective(*entry->schedule, members,
                      cost_of(*entry, request, members, *topology, itemsize(dtype)));
  last_choice = LastChoice{generation, fields_of(request), context.world, bytes,
                           members,    own != nullptr,     topology_key,  entry};
  return entry;
}

}  // namespace

bool evaluates_plans() { return evaluates_plans_in(tessera::world::current()); }

namespace {

SharedResults run(const CallContext& context, int32_t collective, const std::vector<int>& members,
                  const std::vector<Tensor>& inputs, int64_t count, int32_t reduce_op, int32_t root,
                  bool shared_outputs, bool overwrite_inputs) {
  const std::shared_ptr<Cached> entry =
      chosen_and_reported(context, collective, members, inputs, count, reduce_op, root);
  if (shapes_only(inputs))
    return {RankResults::each(outputs_without_data(entry->request, inputs)), false};  // no values
  // Simulated (every rank here): the result needs only the schedule's reductions, not its messages.
  // Traces are unaffected: they are drawn from the schedule and the cost model above.
  tessera::world::WorldState& in = tessera::world::current();
  const bool evaluate = evaluates_plans_in(in);
  count_path(evaluate);
  if (evaluate && shared_outputs) return {evaluate_plan_shared(*plan_of(*entry), inputs), true};
  if (evaluate) return {RankResults::each(evaluate_plan(*plan_of(*entry), inputs)), false};
  return {RankResults::each(execute(*entry->schedule, inputs,
                                    ExecutionPlace{&in, &members, context.call, overwrite_inputs,
                                                   context.fingerprint, &entry->schedule})),
          false};
}

}  // namespace

std::vector<Tensor> run_collective(const CallContext& context, int32_t collective,
                                   const std::vector<int>& members, const std::vector<Tensor>& inputs,
                                   int64_t count, int32_t reduce_op, int32_t root) {
  return std::move(
      run(context, collective, members, inputs, count, reduce_op, root, false, false).outputs.distinct);
}

SharedResults run_collective_shared(const CallContext& context, int32_t collective,
                                    const std::vector<int>& members, const std::vector<Tensor>& inputs,
                                    int64_t count, int32_t reduce_op, int32_t root, bool overwrite_inputs) {
  return run(context, collective, members, inputs, count, reduce_op, root, true, overwrite_inputs);
}

std::vector<Tensor> repeat_collective(const CallContext& context, int32_t collective,
                                      const std::vector<int>& members, const std::vector<Tensor>& inputs,
                                      int64_t count, int32_t reduce_op, int32_t root,
                                      const std::vector<Tensor>& known) {
  if (!evaluates_plans() || known.size() != inputs.size())
    throw Error("repeat_collective: results can be reused only in a simulated world (internal error)");
  chosen_and_reported(context, collective, members, inputs, count, reduce_op, root);
  count_path(true);
  std::vector<Tensor> outputs;
  outputs.reserve(known.size());
  for (const Tensor& result : known)
    outputs.push_back(result.defined() ? Tensor(result.impl()->replica()) : result);
  return outputs;
}

}  // namespace tessera::comm
