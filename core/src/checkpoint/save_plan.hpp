// What a save writes, decided before any byte is written: every entry's metadata, and the chunks
// this process writes with the bytes of each (a contiguous host tensor). Planning runs on the
// caller's thread (it may redistribute a Partial DTensor, a collective); writing needs nothing
// but the plan, so async_save writes a staged plan on another thread.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/metadata.hpp"
#include "tessera/checkpoint.hpp"

namespace tessera::dcp {

struct PlannedChunk {
  std::string key;
  size_t index = 0;  // within the entry's chunks
  DType dtype = kFloat32;
  Tensor bytes;  // contiguous, on the host: exactly the chunk's elements
};

struct SavePlan {
  // Every entry, listing the chunks this process writes (their file names and byte ranges are
  // filled in by the write); the metadata's writer adds the other processes' chunks.
  Metadata metadata;
  std::vector<PlannedChunk> chunks;  // the chunks this process writes, in file order
  int process_index = 0;
  int num_processes = 1;
};

// stage: copy every chunk's bytes, so that later writes to the state's tensors do not reach them.
SavePlan plan_save(const StateDict& state, bool stage);

}  // namespace tessera::dcp
