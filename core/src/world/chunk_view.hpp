// How the process link hands a range of a buffer to a transport (transport.h's chunks).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>

#include "tensor/tensor_impl.hpp"
#include "tessera/sdk/status.h"

namespace tessera::world {

// A 1-d DLTensor over `count` elements of a CPU tensor's contiguous bytes from element `offset`, as
// transport.h asks; throws Error naming `transport` when the tensor is not in host memory or the
// range is not inside it. `length` holds the element count the DLTensor's shape points at; it must
// outlive the DLTensor's use.
DLTensor chunk_view(const TensorImpl& impl, int64_t offset, int64_t count, const std::string& transport,
                    int64_t& length);

}  // namespace tessera::world
