// Runs a schedule on real data in simulation: every group rank's buffers are dense tensors in
// this process and messages move bytes between them.
#pragma once

#include <vector>

#include "comm/schedule.hpp"
#include "tessera/tensor.hpp"

namespace tessera::comm {

// inputs[r] is group rank r's input buffer: a 1-d dense tensor of the request's input size and
// dtype. Returns every rank's output buffer (1-d; elements the collective does not define for a
// rank, such as non-root outputs of reduce, are unspecified).
std::vector<Tensor> execute(const Schedule& schedule, const std::vector<Tensor>& inputs);

// The element-wise kernel that implements a TESSERA_REDUCE_* op.
const char* reduce_kernel(int32_t reduce_op);

}  // namespace tessera::comm
