// One FSDP parameter group: the parameters one fully_shard call manages, their sharded and
// unsharded values, and the collectives that move between them (one all_gather and one
// reduce_scatter for the whole group, over a flat buffer of every parameter's padded shard, as
// PyTorch's FSDP2 does).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/dtensor.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/parallel/fully_shard.hpp"

namespace tessera::parallel {

class FsdpGroup final : public nn::Module::Extension, public std::enable_shared_from_this<FsdpGroup> {
 public:
  // Shards the parameters (their slots now hold the sharded DTensors). `where` names the module.
  FsdpGroup(const std::vector<std::pair<std::string, nn::Parameter>>& parameters,
            const FullyShardOptions& options, std::string where);

  // Gathers the group (one all_gather) and puts the unsharded values in the slots. When autograd
  // records, the unsharded values are the outputs of a node whose backward reduce-scatters their
  // gradients into the sharded parameters.
  void unshard();
  // After the module's forward: unless the values stay for backward (the root, or
  // reshard_after_forward off), the slots get the sharded values back and the unsharded bytes are
  // released (autograd keeps the tensors), and `output` passes through a node that gathers them
  // again when backward reaches it.
  void after_forward(nn::Value& output);

  // The node's backward: the sharded gradients, one per parameter (reduce_scatter, averaged);
  // then this forward's unsharded values are released.
  std::vector<Tensor> reduce_gradients(const std::vector<Tensor>& unsharded_grads,
                                       const std::vector<Tensor>& unsharded);

  void set_root(bool root) { is_root_ = root; }
  bool empty() const { return params_.empty(); }
  const std::string& where() const { return where_; }

 private:
  struct Param {
    std::string name;
    nn::Parameter slot;
    std::optional<DTensor> sharded;        // the leaf the optimizer updates
    std::optional<DeviceMesh> tp_mesh;     // set when the parameter was a tensor-parallel DTensor
    Placement tp_placement = Replicate();  // its placement there
    Shape global;                          // the full parameter's shape
    int64_t shard_dim = 0;                 // the dim sharded over dp (of the tensor-parallel shard)
    int64_t length = 0;                    // that dim's length in a tensor-parallel shard, before dp
    int64_t chunk = 0;                     // rows per dp rank, padded: ceil(length / dp)
    Tensor unsharded;                      // the gathered local values (undefined while sharded)
  };

  // One rank's flat buffer of every parameter's padded shard, in param_dtype.
  Tensor pack_shards(int rank) const;
  // Every parameter's unsharded value on one rank, from the gathered buffer.
  std::vector<Tensor> unpack_gathered(int rank, const Tensor& gathered) const;
  // The unsharded values as a local tensor per parameter (one all_gather).
  std::vector<Tensor> gather() const;
  Tensor any_sharded_local() const;
  int64_t rows_of(const Param& p, int64_t dp_rank) const;
  int64_t dp_rank_of(int rank) const;
  nn::Value gather_when_backward_arrives(const nn::Value& output, const std::vector<Tensor>& released);
  void gather_into(const std::vector<Tensor>& released);

  std::vector<Param> params_;
  FullyShardOptions options_;
  std::string where_;
  bool is_root_ = true;
  bool gathered_ = false;     // the unsharded tensors hold current values
  bool in_backward_ = false;  // a backward through the last forward has not reduced yet
  // The slots hold values gathered by a forward that recorded a backward which has not run yet.
  bool slots_await_backward_ = false;
};

}  // namespace tessera::parallel
