// Runs a schedule on real data in simulation: every group rank's buffers are dense tensors in
// this process and messages move bytes between them.
#pragma once

#include <memory>
#include <vector>

#include "comm/schedule.hpp"
#include "tessera/tensor.hpp"

namespace tessera::world {
class WorldState;
}

namespace tessera::comm {

// Where a schedule runs: the world (null: simulated, every rank here), the members' global ranks
// in group-rank order, and the API call's sequence number (message tags across processes).
struct ExecutionPlace {
  world::WorldState* world = nullptr;
  const std::vector<int>* members = nullptr;
  uint64_t call = 0;
  // The inputs may be written (TensorModel's overwrite_inputs): the caller writes the outputs back
  // into them.
  bool overwrite_inputs = false;
  // Digest of what the API call is (CallContext::fingerprint): part of every message's envelope.
  uint64_t fingerprint = 0;
  // The schedule cache's pointer to the schedule run (null: none): given, a world spread over
  // processes keeps what the run prepared for later calls with the same signature
  // (prepared_call.hpp).
  const std::shared_ptr<const Schedule>* cached_schedule = nullptr;
};

// inputs[r] is group rank r's input buffer: a 1-d dense tensor of the request's input size and
// dtype, or undefined for a rank hosted by another process. Returns every rank's output buffer
// (1-d; undefined for ranks hosted elsewhere; elements the collective does not define for a rank,
// such as non-root outputs of reduce, are unspecified). In a distributed world, the same schedule
// runs: steps of hosted ranks here, messages to and from other processes over the transport.
std::vector<Tensor> execute(const Schedule& schedule, const std::vector<Tensor>& inputs,
                            const ExecutionPlace& place = {});

// The element-wise kernel that implements a TESSERA_REDUCE_* op.
const char* reduce_kernel(int32_t reduce_op);
// Its fold (sdk/cpp/fold_ops.hpp): a chain of those reductions in one call. Optional in a backend.
const char* fold_kernel(int32_t reduce_op);

}  // namespace tessera::comm
