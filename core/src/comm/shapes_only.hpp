// Collectives on tensors that hold shapes only (a TESSERA_BACKEND_SHAPES_ONLY backend, such as
// backend-meta): the schedule is built, verified, costed and reported as for any tensor, but there
// are no values to move, so it is not replayed.
#pragma once

#include <vector>

#include "comm/schedule.hpp"
#include "tessera/tensor.hpp"

namespace tessera::comm {

// Whether a collective's inputs (undefined for ranks hosted elsewhere) hold shapes only.
bool shapes_only(const std::vector<Tensor>& inputs);

// What execute() returns for these inputs, without running a step: each hosted group rank's
// output buffer (1-d, of the size the schedule gives it, on the inputs' backend), undefined for
// ranks hosted elsewhere.
std::vector<Tensor> outputs_without_data(const Schedule& schedule, const std::vector<Tensor>& inputs);

}  // namespace tessera::comm
