// The bytes a chunk's DLTensor describes, checked the way transport.h defines them: host memory
// (kDLCPU), contiguous, data + byte_offset, numel * ceil(bits * lanes / 8) bytes long.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>

namespace tessera::transport_mpi {

struct ChunkBytes {
  std::byte* data = nullptr;  // data + byte_offset; may be null only when bytes == 0
  size_t bytes = 0;
};

// Fails with TESSERA_INVALID_ARGUMENT, naming `call` ("isend"/"irecv"), the offending field
// and value, and what was expected.
ChunkBytes chunk_bytes(const DLTensor& chunk, const char* call);

}  // namespace tessera::transport_mpi
