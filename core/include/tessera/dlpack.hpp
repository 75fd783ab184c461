// Zero-copy interchange with other array libraries through DLPack (PyTorch: torch.utils.dlpack).
// The memory is shared, never copied: a write through either side is seen by the other.
#pragma once

#include <utility>

#include "tessera/tensor.hpp"

struct DLManagedTensor;  // <dlpack/dlpack.h>; declared here so users need not include it

namespace tessera {

// Hands dense `tensor`'s elements to a DLPack consumer without copying. The tensor's memory stays
// alive until the consumer calls the returned tensor's deleter (exactly once). Throws Error for an
// undefined or local tensor (export one shard: t.shard(r)) and for a shapes-only backend, which holds
// no values. Bytes shared copy-on-write with another rank's replica are first made this tensor's own,
// so a consumer writing through them changes this tensor only.
DLManagedTensor* to_dlpack(const Tensor& tensor);

// Where to_dlpack's memory would be: (DLDeviceType, device id), e.g. (1, 0) for the host (Python's
// __dlpack_device__). Throws Error for an undefined or local tensor.
std::pair<int, int> dlpack_device(const Tensor& tensor);

// A tensor viewing `managed`'s memory (shape, strides and offset as given, negative strides too),
// taking ownership: `managed`'s deleter runs when the last view of it is gone, and also when this
// throws. The memory must be on the host (kDLCPU; it goes to the default backend when that one is a
// host backend, else to "cpu"), hold a dtype Tensor knows, be aligned to its elements and have at
// most 16 dims; anything else is an Error naming what was given and what is accepted.
Tensor from_dlpack(DLManagedTensor* managed);

}  // namespace tessera
