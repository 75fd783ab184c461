// Distributed checkpoints (PyTorch: torch.distributed.checkpoint): save and load state dicts of
// tensors, local tensors, DTensors and scalars, loading into any mesh, placements or world size.
//
// A checkpoint is a directory (docs/checkpoint-format.md describes it byte by byte):
//   __<generation>_<process>.distcp  one data file per writing process, in the safetensors layout;
//                                    each chunk (a box of a tensor that some rank holds) is written
//                                    once, by the lowest rank holding it, followed by a table of
//                                    CRC32C checksums of its blocks;
//   .metadata                        JSON: every entry's kind, global shape, dtype, placements and
//                                    chunks (offsets, sizes, file, byte ranges), and the scalars.
// `.metadata` is the commit point: a save writes new data files under new names, fsyncs them,
// then replaces `.metadata` by an atomic rename (after fsyncing it and the directory), and only
// then removes the files the new metadata no longer names. A process killed at any moment of a
// save leaves either the complete old or the complete new checkpoint.
//
// In ranks' programs (ts::spawn) every rank calls save, async_save or load with its own state dict,
// as torchrun processes do: DTensors hold the rank's own shard; the ranks' dicts may hold different
// keys (pipeline stages), but a DTensor comes from every rank of its mesh; a plain tensor or a scalar
// is what every rank holds (the lowest rank's is saved; a load gives it to every rank asking for it).
// The calls meet as one collective of the world and save or load once. Across processes, the ranks
// of every process together pass the same keys, and async_save is refused there.
//
// Loading computes, for every rank this process hosts, the global boxes its shard holds, intersects
// them with the saved chunks and reads only those byte ranges (once, however many hosted ranks need
// them), widened to whole checksum blocks so that every byte read is checked. Each rank's shard is
// written in place: the tensors of the given state dict keep their identity.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "tessera/dtensor.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/optim.hpp"
#include "tessera/tensor.hpp"

namespace tessera::dcp {

// One entry of a state dict: a tensor (dense: what every rank holds; or local: one value per
// rank), a DTensor, or a scalar (an optimizer's step count, a learning rate, a name).
using StateValue = std::variant<Tensor, DTensor, int64_t, double, std::string>;
// Key -> value, as PyTorch's dict of a flattened state dict.
using StateDict = std::map<std::string, StateValue>;

struct SaveOptions {
  // Every chunk's bytes are checksummed in blocks of this many bytes (the last block of a chunk may
  // be shorter). A load reads whole blocks, so smaller blocks read fewer bytes beyond what a rank
  // needs when it cuts a chunk across its inner dims, at 4 bytes of checksum per block.
  int64_t checksum_block_bytes = 4096;
};

struct SaveStats {
  std::vector<std::string> files;  // the data files this process wrote (names within the directory)
  int64_t chunks_written = 0;
  int64_t bytes_written = 0;  // tensor bytes, without headers and checksum tables
};

struct LoadStats {
  int64_t bytes_needed = 0;  // tensor bytes the hosted ranks' shards hold (what they must receive)
  // Tensor bytes read from data files. A byte several hosted ranks need is read once (so with
  // replicated destinations this is less than bytes_needed); more is read where whole checksum
  // blocks, short gaps read through to save a read, or the alignment of direct reads add bytes.
  int64_t bytes_read = 0;
  int64_t checksum_bytes_read = 0;  // bytes of checksum tables read
  int64_t chunks_read = 0;          // saved chunks read from (each once per load)
  int64_t reads = 0;                // reads (pread calls) made on data files
  int64_t files_opened = 0;
};

// Writes `state` as a checkpoint in directory `path` (made if missing), replacing the checkpoint
// there. Call it with the same keys on every process of the world; inside a LocalMode it saves for
// the mode's ranks. A DTensor with Partial placements is reduced first (its saved value is the
// global tensor). A DTensor on a sliced mesh (several fibres) is refused: each fibre is its own
// tensor.
SaveStats save(const StateDict& state, const std::string& path, const SaveOptions& options = {});
// Copies (stages) every tensor before it returns, then writes on another thread: what the state's
// tensors hold after the call returns does not change the checkpoint. The future gives the stats,
// or rethrows the error of the save.
//
// In a world of one process the other thread does the whole save, commit included. In a world
// spread over processes, every exchange between processes stays on the calling thread, so that
// it never meets the messages of the collectives the program runs meanwhile (the world's link
// matches messages by order, and a second thread's exchanges could cross-match them):
// - before returning, the processes agree (a collective) on the checkpoint's generation, so the
//   call is collective, as save is;
// - the other thread only writes this process's data file;
// - the commit (every process wrote its file, then the first process writes .metadata) is a
//   collective, run by whichever comes first of the future's get() or wait() and the world's next
//   save, async_save or load. Every process must reach it at the same point of its sequence of
//   collectives (as with any collective); the future is deferred (wait_for answers
//   std::future_status::deferred), and until the commit the directory holds the previous
//   checkpoint. A program that never asks has not saved.
// Either way, a save, async_save or load in the same world first finishes the async save before
// it, so two saves never write one directory at once.
std::future<SaveStats> async_save(const StateDict& state, const std::string& path,
                                  const SaveOptions& options = {});

// Fills `state` from the checkpoint in `path`: tensors in place (in their own placements, mesh
// and ranks, which may differ from the saved ones), scalars replaced. Errors name the key, and for
// a data problem the file and the chunk: a requested key missing from the checkpoint, a dtype or
// shape mismatch, a kind mismatch (a scalar for a tensor, a local tensor for a DTensor), a
// truncated file or a checksum mismatch. Checkpoint keys not in `state` are ignored. Everything
// checkable from the metadata is checked before any tensor is written. In a world spread over
// processes, a pending async_save of the world is committed first (a collective: see async_save).
LoadStats load(StateDict& state, const std::string& path);

// Writes one ordinary .safetensors file holding every tensor entry of the checkpoint as its full
// tensor (a local tensor's shards as "<key>@rank<r>"); the scalars go to the header's
// "__metadata__" as text. Reads and checks every chunk.
void consolidate(const std::string& path, const std::string& file);

// A table of the checkpoint's entries: key, kind, dtype, global shape, placements and mesh saved,
// chunk count and bytes, followed by the data files and their sizes.
std::string inspect(const std::string& path);

}  // namespace tessera::dcp

namespace tessera {

// A module's parameters and persistent buffers by dotted name (Tensors or DTensors, as the module
// holds them; the values share the module's bytes, so a load into them loads the module).
dcp::StateDict get_model_state_dict(const nn::Module& module);
// Copies every entry into the module's parameter or buffer of that name, in place. strict: a key
// the module lacks or a parameter the dict lacks is an error naming them.
void set_model_state_dict(nn::Module& module, const dcp::StateDict& state, bool strict = true);

// The optimizer's state keyed by the module's parameter names, as PyTorch's flattened form:
// "state.<param>.<field>" (tensors with the parameter's layout: DTensors for DTensor parameters;
// int64 "step" for AdamW) and "param_groups.lr". State a parameter has not made yet is made here,
// as zeros (PyTorch's get_optimizer_state_dict does the same), so that a fresh optimizer's dict can
// receive a load; for SGD with dampening d such a zero momentum buffer makes the first step use
// (1 - d) * grad where a fresh one would use grad.
dcp::StateDict get_optimizer_state_dict(const nn::Module& module, optim::Optimizer& optimizer);
// Puts the entries back into the optimizer (the tensors become its state; the lr is set).
// Every parameter of the optimizer must be a parameter of the module.
void set_optimizer_state_dict(const nn::Module& module, optim::Optimizer& optimizer,
                              const dcp::StateDict& state);

}  // namespace tessera
