// dcp::save, async_save and load called from ranks' programs (ts::spawn), as torchrun processes
// call torch.distributed.checkpoint: every rank of the world calls with its own state dict, whose
// DTensors hold the rank's shard alone. The calls meet as one collective of the whole world; its
// run puts the members' state dicts together (each DTensor's shards from the ranks of its mesh,
// the very shard tensors, so a load writes into the members' bytes) and saves or loads that once,
// as a LocalMode program would. The ranks' dicts may hold different keys (the stages of a
// pipeline hold different parameters); a DTensor must come from every rank of its mesh. A plain
// tensor or a scalar is what every rank holds (PyTorch's DCP also keeps one copy): the lowest
// rank's is saved, and a load gives it to every rank that asks for the key.
#pragma once

#include <future>
#include <string>

#include "tessera/checkpoint.hpp"
#include "world/world.hpp"

namespace tessera::dcp {

SaveStats save_in_rank_program(const world::RunningProgram& program, const StateDict& state,
                               const std::string& path, const SaveOptions& options);
std::future<SaveStats> async_save_in_rank_program(const world::RunningProgram& program,
                                                  const StateDict& state, const std::string& path,
                                                  const SaveOptions& options);
LoadStats load_in_rank_program(const world::RunningProgram& program, StateDict& state,
                               const std::string& path);

}  // namespace tessera::dcp
