#include "comm/executor.hpp"

#include <memory>

#include "comm/process_runner.hpp"
#include "comm/schedule_runner.hpp"
#include "comm/tensor_model.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
#include "world/world.hpp"

namespace tessera::comm {

const char* reduce_kernel(int32_t reduce_op) {
  switch (reduce_op) {
    case TESSERA_REDUCE_SUM: return "add";
    case TESSERA_REDUCE_PRODUCT: return "mul";
    case TESSERA_REDUCE_MIN: return "minimum";
    case TESSERA_REDUCE_MAX: return "maximum";
    case TESSERA_REDUCE_BAND: return "bitwise_and";
    case TESSERA_REDUCE_BOR: return "bitwise_or";
    case TESSERA_REDUCE_BXOR: return "bitwise_xor";
    default: return "unknown_reduce_op";
  }
}

const char* fold_kernel(int32_t reduce_op) {
  switch (reduce_op) {
    case TESSERA_REDUCE_SUM: return "fold_add";
    case TESSERA_REDUCE_PRODUCT: return "fold_mul";
    case TESSERA_REDUCE_MIN: return "fold_minimum";
    case TESSERA_REDUCE_MAX: return "fold_maximum";
    case TESSERA_REDUCE_BAND: return "fold_bitwise_and";
    case TESSERA_REDUCE_BOR: return "fold_bitwise_or";
    case TESSERA_REDUCE_BXOR: return "fold_bitwise_xor";
    default: return "unknown_reduce_op";
  }
}

std::vector<Tensor> execute(const Schedule& schedule, const std::vector<Tensor>& inputs, const ExecutionPlace& place) {
  DisabledLocalMode plain_buffers;  // buffers are dense whatever mode the caller is in
  TensorModel model(schedule, inputs);
  if (place.world != nullptr && place.world->distributed())
    run_across_processes(schedule, model, place);
  else
    run_schedule(schedule, model);
  return model.outputs();
}

}  // namespace tessera::comm
