// Tensor- and sequence-parallel styles (PyTorch: torch.distributed.tensor.parallel) and
// parallelize_module. A style turns a module's parameters into DTensors on a 1-d mesh and installs
// forward hooks that lay out its inputs and outputs; the module's own code is unchanged.
//
// Layouts are one placement per tensor on the 1-d tensor-parallel mesh. Defaults are PyTorch's:
//   ColwiseParallel:  input Replicate -> output Shard(-1), local output
//   RowwiseParallel:  input Shard(-1) -> output Replicate, local output
//   SequenceParallel: input Shard(sequence_dim), parameters Replicate, DTensor output
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/device_mesh.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/placement.hpp"

namespace tessera {

// Linear: weight (and bias) Shard(0), so each rank computes a slice of the output features.
// Embedding: weight Shard(1) (a slice of the embedding dim).
struct ColwiseParallel {
  std::optional<Placement> input_layouts = std::nullopt;   // the input's layout as given (default Replicate)
  std::optional<Placement> output_layouts = std::nullopt;  // the output's layout (default Shard(-1))
  bool use_local_output = true;                            // return the output's local tensor
};

// Linear: weight Shard(1) and bias Replicate; each rank reduces over its slice of the input
// features, and the partial sums are combined into output_layouts. Embedding: weight Shard(0)
// (vocabulary parallel: each rank looks up the rows it holds, the sum combines them).
struct RowwiseParallel {
  std::optional<Placement> input_layouts =
      std::nullopt;  // default Shard(-1) (Linear) or Replicate (Embedding)
  std::optional<Placement> output_layouts = std::nullopt;  // default Replicate
  bool use_local_output = true;
};

// For modules that act on each position alone (norms, dropout): parameters Replicate, the input
// sharded on the sequence dim, no communication.
struct SequenceParallel {
  int64_t sequence_dim = 1;
  bool use_local_output = false;
};

// Lays out a module's inputs: input i given as input_layouts[i] is redistributed to
// desired_input_layouts[i]; std::nullopt leaves input i as it is (e.g. a non-tensor argument).
struct PrepareModuleInput {
  std::vector<std::optional<Placement>> input_layouts = {};
  std::vector<std::optional<Placement>> desired_input_layouts = {};
  bool use_local_output = false;
};

// Lays out a module's output: given as output_layouts, redistributed to desired_output_layouts.
struct PrepareModuleOutput {
  std::optional<Placement> output_layouts = std::nullopt;
  std::optional<Placement> desired_output_layouts = std::nullopt;
  bool use_local_output = true;
};

using ParallelStyle =
    std::variant<ColwiseParallel, RowwiseParallel, SequenceParallel, PrepareModuleInput, PrepareModuleOutput>;

// Module paths (dotted, relative to the module parallelized; `*` matches any one name, e.g.
// "layers.*.attention.wq") to styles, applied in order.
using ParallelizePlan = std::vector<std::pair<std::string, ParallelStyle>>;

// Applies the plan on `mesh` (1-d; pass mesh["tp"] of a larger mesh). Each key must match at
// least one module. Returns `module`.
nn::Module& parallelize_module(nn::Module& module, const DeviceMesh& mesh, const ParallelizePlan& plan);
// Applies one style to the module itself.
nn::Module& parallelize_module(nn::Module& module, const DeviceMesh& mesh, const ParallelStyle& style);

template <class Holder, class = typename Holder::ContainedType>
Holder parallelize_module(Holder holder, const DeviceMesh& mesh, const ParallelizePlan& plan) {
  parallelize_module(*holder, mesh, plan);
  return holder;
}
template <class Holder, class = typename Holder::ContainedType>
Holder parallelize_module(Holder holder, const DeviceMesh& mesh, const ParallelStyle& style) {
  parallelize_module(*holder, mesh, style);
  return holder;
}

// A style's name for messages: "ColwiseParallel", ...
std::string style_name(const ParallelStyle& style);

}  // namespace tessera
