// One collective over one fibre: choose the algorithm, fetch (or build) its schedule, execute it.
#pragma once

#include <vector>

#include "comm/call.hpp"
#include "comm/schedule.hpp"
#include "tessera/dist.hpp"
#include "tessera/tensor.hpp"

namespace tessera::comm {

// context: the API call (begin_call): the ranks the topology spans and the call's sequence number;
// members[i]: group rank i's global rank; inputs[i]: its input buffer (1-d, contiguous, the size
// collective.h gives for `count`), undefined for a rank hosted by another process. Outputs are
// undefined for those ranks too. Runs in the calling thread's world (its topology and ring orders). Returns every group rank's output buffer. Ring-shaped
// algorithms visit the members in the default topology's ring order; every algorithm's request
// carries the members' world ranks and that topology (SDK 1.3: group_ranks, locality, ...).
std::vector<Tensor> run_collective(const CallContext& context, int32_t collective, const std::vector<int>& members,
                                   const std::vector<Tensor>& inputs, int64_t count,
                                   int32_t reduce_op = TESSERA_REDUCE_SUM, int32_t root = 0);

// The schedule an algorithm builds for a request, cached per (algorithm, collective, group size,
// count, dtype, op, root, ring order, the members' world ranks, the topology's fingerprint): the
// last two because an SDK 1.3 algorithm may read them (request_key.hpp). Each is verified once, when built; a wrong one is an Error
// naming the plugin, the algorithm, the request and what is wrong.
std::shared_ptr<const Schedule> cached_schedule(const std::string& algorithm, const tessera_collective_request& request);
// The plan (schedule_plan.hpp) of the cached schedule for a request, derived once, when first asked.
struct SchedulePlan;
std::shared_ptr<const SchedulePlan> cached_plan(const std::string& algorithm, const tessera_collective_request& request);
// Drops the cached schedules of `algorithm`: its plugin was unloaded, and one loaded later under
// the same name must build (and pass verification) afresh.
void forget_schedules(const std::string& algorithm);

// The reduction a schedule performs for a user's op: AVG and PREMUL_SUM are sums with scaling
// around them, done by the caller.
int32_t schedule_reduce_op(const ReduceOp& op);

// The number of ranks a collective on this local tensor spans: the calling thread's world's size
// (an Error when the tensor has a rank outside it), or in a thread's default world, which has no
// fixed size, one more than the tensor's largest rank.
int world_of(const Tensor& tensor);

tessera_collective_request make_request(int32_t collective, int group_size, int64_t count, DType dtype,
                                        int32_t reduce_op, int32_t root);

}  // namespace tessera::comm
