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
  // Puts the sharded values back in the slots and frees the unsharded bytes (autograd keeps the
  // tensors; backward gathers into them again).
  void reshard();
  // The module's output, passed through a node that gathers the group again when backward
  // reaches it (if it was resharded after forward).
  nn::Value wrap_output(const nn::Value& output);

  // The node's backward: the sharded gradients, one per parameter (reduce_scatter, averaged).
  std::vector<Tensor> reduce_gradients(const std::vector<Tensor>& unsharded_grads);
  void gather_for_backward();

  bool reshard_after_forward() const { return options_.reshard_after_forward && !is_root_; }
  void set_root(bool root) { is_root_ = root; }
  bool empty() const { return params_.empty(); }
  const std::string& where() const { return where_; }

 private:
  struct Param {
    std::string name;
    nn::Parameter slot;
    std::optional<DTensor> sharded;                       // the leaf the optimizer updates
    std::optional<DeviceMesh> tp_mesh;     // set when the parameter was a tensor-parallel DTensor
    Placement tp_placement = Replicate();  // its placement there
    Shape global;                          // the full parameter's shape
    int64_t shard_dim = 0;                 // the dim sharded over dp (of the tensor-parallel shard)
    int64_t length = 0;                    // that dim's length before sharding
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

  std::vector<Param> params_;
  FullyShardOptions options_;
  std::string where_;
  bool is_root_ = true;
  bool gathered_ = false;     // the unsharded tensors hold current values
  bool in_backward_ = false;  // a backward through the last forward has not reduced yet
};

}  // namespace tessera::parallel
