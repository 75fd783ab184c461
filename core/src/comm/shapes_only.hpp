// Collectives on tensors that hold shapes only (a TESSERA_BACKEND_SHAPES_ONLY backend, such as
// backend-meta): the algorithm is chosen, and the call costed and reported, as for any tensor, but
// there are no values to move, so nothing is replayed or evaluated.
#pragma once

#include <vector>

#include "comm/schedule.hpp"
#include "tessera/tensor.hpp"

namespace tessera::comm {

// Whether a collective's inputs (undefined for ranks hosted elsewhere) hold shapes only.
bool shapes_only(const std::vector<Tensor>& inputs);

// What execute() returns for these inputs, without running a step: each hosted group rank's
// output buffer (1-d, of the size the request's collective gives it, on the inputs' backend),
// undefined for ranks hosted elsewhere.
std::vector<Tensor> outputs_without_data(const tessera_collective_request& request,
                                         const std::vector<Tensor>& inputs);

}  // namespace tessera::comm
