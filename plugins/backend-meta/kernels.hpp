// The meta backend's kernels: the (op, dtype) pairs of the kernel catalogue (sdk/KERNELS.md) that a
// computing backend offers, each computing nothing.
#pragma once

#include "tessera/sdk/cpp/backend_builder.hpp"

namespace tessera::meta {

void register_kernels(sdk::BackendBuilder& b);

}  // namespace tessera::meta
