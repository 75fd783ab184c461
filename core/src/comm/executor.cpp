#include "comm/executor.hpp"

#include <memory>

#include "comm/process_runner.hpp"
#include "comm/schedule_runner.hpp"
#include "comm/tensor_model.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
#include "world/world.hpp"

namespace tessera::comm {

namespace {

// Per TESSERA_REDUCE_* op: its element-wise kernel and that kernel's fold (sdk/KERNELS.md).
struct ReduceKernels {
  const char* element_wise;
  const char* fold;
};

ReduceKernels kernels_of(int32_t reduce_op) {
  switch (reduce_op) {
    case TESSERA_REDUCE_SUM:
      return {"add", "fold_add"};
    case TESSERA_REDUCE_PRODUCT:
      return {"mul", "fold_mul"};
    case TESSERA_REDUCE_MIN:
      return {"minimum", "fold_minimum"};
    case TESSERA_REDUCE_MAX:
      return {"maximum", "fold_maximum"};
    case TESSERA_REDUCE_BAND:
      return {"bitwise_and", "fold_bitwise_and"};
    case TESSERA_REDUCE_BOR:
      return {"bitwise_or", "fold_bitwise_or"};
    case TESSERA_REDUCE_BXOR:
      return {"bitwise_xor", "fold_bitwise_xor"};
    default:
      return {"unknown_reduce_op", "unknown_reduce_op"};
  }
}

}  // namespace

const char* reduce_kernel(int32_t reduce_op) { return kernels_of(reduce_op).element_wise; }
const char* fold_kernel(int32_t reduce_op) { return kernels_of(reduce_op).fold; }

std::vector<Tensor> execute(const Schedule& schedule, const std::vector<Tensor>& inputs,
                            const ExecutionPlace& place) {
  DisabledLocalMode plain_buffers;  // buffers are dense whatever mode the caller is in
  TensorModel model(schedule, inputs, place.overwrite_inputs);
  if (place.world != nullptr && place.world->distributed())
    run_across_processes(schedule, model, place);
  else
    run_schedule(schedule, model);
  return model.outputs();
}

}  // namespace tessera::comm
