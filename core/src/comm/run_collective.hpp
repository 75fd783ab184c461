// One collective over one fibre: choose the algorithm, fetch (or build) its schedule, execute it.
#pragma once

#include <vector>

#include "comm/call.hpp"
#include "comm/plan_evaluator.hpp"
#include "comm/schedule.hpp"
#include "tessera/dist.hpp"
#include "tessera/tensor.hpp"

namespace tessera::comm {

// context: the API call (begin_call): the ranks the topology spans and the call's sequence number;
// members[i]: group rank i's global rank; inputs[i]: its input buffer (1-d, contiguous, the size
// collective.h gives for `count`), undefined for a rank hosted by another process. Outputs are
// undefined for those ranks too. Runs in the calling thread's world. Returns every group rank's
// output buffer. The topology is the group's own (context.topology) or else the world's (its
// preset, and in a world spread over processes the transport's links between them): ring-shaped
// algorithms visit the members in its ring order, every algorithm's request carries the members'
// world ranks and it (SDK 1.3: group_ranks, locality, transfer_time, which estimates and "auto"
// use), and reports (counters, traces) are costed on it.
std::vector<Tensor> run_collective(const CallContext& context, int32_t collective,
                                   const std::vector<int>& members, const std::vector<Tensor>& inputs,
                                   int64_t count, int32_t reduce_op = TESSERA_REDUCE_SUM, int32_t root = 0);

// run_collective for callers that only copy or share bytes out of the outputs: ranks with equal
// results may get one Tensor (evaluate_plan's). `shared` says whether they may: a result must then
// land by sharing its bytes, as taking its buffer would take it from the other ranks too.
// overwrite_inputs: the caller writes the results back into the inputs' tensors, so a replayed
// schedule that allows it (in_place.hpp) computes in the inputs' memory, and an output may be its
// input (nothing left to write back). After an Error the inputs may then hold partial results.
struct SharedResults {
  RankResults outputs;  // outputs[i]: group rank i's
  bool shared = false;
};
SharedResults run_collective_shared(const CallContext& context, int32_t collective,
                                    const std::vector<int>& members, const std::vector<Tensor>& inputs,
                                    int64_t count, int32_t reduce_op, int32_t root,
                                    bool overwrite_inputs = false);

// Whether collectives of the calling thread's world compute their results from schedule plans (a
// simulated world, replay not forced): only then may a fibre reuse another fibre's results.
bool evaluates_plans();
// run_collective over a fibre whose inputs hold the same values as those of a fibre that already
// ran and gave `known` (the replicas one root's bytes became, scattered again by another root):
// chosen and reported as run_collective does, with replicas of `known` as its outputs. Only where
// evaluates_plans() (the caller checks; it is an internal error elsewhere).
std::vector<Tensor> repeat_collective(const CallContext& context, int32_t collective,
                                      const std::vector<int>& members, const std::vector<Tensor>& inputs,
                                      int64_t count, int32_t reduce_op, int32_t root,
                                      const std::vector<Tensor>& known);

// The schedule an algorithm builds for a request, cached per (algorithm, collective, group size,
// count, dtype, op, root, ring order, the members' world ranks, the topology's fingerprint): the
// last two because an SDK 1.3 algorithm may read them (request_key.hpp). Each is verified once, when built; a
// wrong one is an Error naming the plugin, the algorithm, the request and what is wrong.
std::shared_ptr<const Schedule> cached_schedule(const std::string& algorithm,
                                                const tessera_collective_request& request);
// The plan (schedule_plan.hpp) of the cached schedule for a request, derived once, when first asked.
struct SchedulePlan;
std::shared_ptr<const SchedulePlan> cached_plan(const std::string& algorithm,
                                                const tessera_collective_request& request);
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
