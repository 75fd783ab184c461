// replicate (DDP): every rank keeps the whole module; backward averages the gradients over the
// data-parallel mesh with one all_reduce per bucket, buckets filled in reverse registration order.
#include <fmt/format.h>

#include <algorithm>

#include "autograd/record.hpp"
#include "parallel/shapes_only.hpp"
#include "tessera/autograd.hpp"
#include "tessera/dist.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"
#include "tessera/observe.hpp"
#include "tessera/ops.hpp"
#include "tessera/parallel/fully_shard.hpp"

namespace tessera {
namespace {

constexpr const char* kReplicateKey = "replicate";
// PyTorch's DDP caps its first bucket at 1 MiB, so that the first all_reduce starts early.
constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;

class ReplicateState final : public nn::Module::Extension,
                             public std::enable_shared_from_this<ReplicateState> {
 public:
  ReplicateState(std::vector<std::pair<std::string, nn::Parameter>> params, ReplicateOptions options)
      : params_(std::move(params)), options_(std::move(options)) {
    for (const auto& [name, p] : params_) originals_.push_back(p.tensor());
    // Backward produces gradients roughly in reverse registration order: fill buckets that way.
    const auto cap = static_cast<int64_t>(options_.bucket_cap_mb * 1024.0 * 1024.0);
    std::vector<size_t> bucket;
    int64_t bytes = 0;
    for (size_t i = params_.size(); i-- > 0;) {
      const int64_t size = originals_[i].numel() * static_cast<int64_t>(itemsize(originals_[i].dtype()));
      const int64_t limit = buckets_.empty() ? std::min(cap, kFirstBucketBytes) : cap;
      if (!bucket.empty() && bytes + size > limit) {
        buckets_.push_back(std::move(bucket));
        bucket.clear();
        bytes = 0;
      }
      bucket.push_back(i);
      bytes += size;
    }
    if (!bucket.empty()) buckets_.push_back(std::move(bucket));
  }

  // Before forward: the slots hold aliases of the parameters made by a node whose backward
  // all-reduces their gradients.
  void before_forward() {
    if (!autograd::any_requires_grad(originals_)) return;
    std::vector<Tensor> aliases;
    {
      const NoGradGuard no_grad;
      for (const Tensor& p : originals_) aliases.push_back(p.view(p.shape()));
    }
    auto self = shared_from_this();
    autograd::record_node("DDPAllReduceBackward", originals_, aliases,
                          [self](std::vector<Tensor>& grads) { return self->all_reduce(grads); });
    for (size_t i = 0; i < params_.size(); ++i) params_[i].second.set(aliases[i]);
  }

  void after_forward() {
    for (size_t i = 0; i < params_.size(); ++i) params_[i].second.set(originals_[i]);
  }

  std::vector<Tensor> all_reduce(const std::vector<Tensor>& grads) {
    const NoGradGuard no_grad;
    std::vector<Tensor> out(grads.size());
    for (const std::vector<size_t>& bucket : buckets_) {
      std::vector<size_t> present;
      std::vector<Tensor> flat;
      for (size_t i : bucket) {
        if (!grads[i].defined()) continue;
        present.push_back(i);
        flat.push_back(grads[i].contiguous().flatten());
      }
      if (present.empty()) continue;
      Tensor buffer = cat(flat, 0);
      {
        const CommLabel along(options_.mesh.dim_names().empty() ? "dp" : options_.mesh.dim_names()[0],
                              "replicate");
        dist::all_reduce(buffer, ReduceOp::AVG, options_.mesh.group(0));
      }
      int64_t offset = 0;
      for (size_t i : present) {
        const int64_t n = grads[i].numel();
        Tensor g = buffer.narrow(0, offset, n).view(originals_[i].shape());
        // Every rank now holds the same average: a plain parameter gets it as one plain tensor
        // (reconcile checks that the ranks agree bit for bit). A shapes-only backend (meta) has no
        // bits to compare: any rank's shard, of the one shape all share, is the gradient.
        if (g.is_local() && !originals_[i].is_local())
          g = parallel::shapes_only(g) ? g.shards().begin()->second : g.reconcile();
        out[i] = g;
        offset += n;
      }
    }
    return out;
  }

  size_t bucket_count() const { return buckets_.size(); }

 private:
  std::vector<std::pair<std::string, nn::Parameter>> params_;
  std::vector<Tensor> originals_;
  ReplicateOptions options_;
  std::vector<std::vector<size_t>> buckets_;
};

}  // namespace

nn::Module& replicate(nn::Module& module, const ReplicateOptions& options) {
  const std::string where = fmt::format("replicate({})", module.name());
  if (options.mesh.ndim() != 1)
    throw Error(fmt::format("{}: the mesh must be the 1-d data-parallel mesh; got {}", where,
                            options.mesh.to_string()));
  if (!(options.bucket_cap_mb > 0))
    throw Error(fmt::format("{}: bucket_cap_mb={} must be > 0", where, options.bucket_cap_mb));
  if (module.attached(kReplicateKey)) throw Error(fmt::format("{}: the module is already replicated", where));
  std::vector<std::pair<std::string, nn::Parameter>> params;
  for (const auto& [name, p] : module.named_parameters()) {
    if (p.is_dtensor())
      throw Error(
          fmt::format("{}: parameter '{}' is a DTensor; replicate keeps plain parameters (use fully_shard "
                      "for parallelized modules)",
                      where, name));
    if (p.tensor().is_local())
      throw Error(fmt::format("{}: parameter '{}' is a local tensor; make the module outside LocalMode",
                              where, name));
    if (p.requires_grad()) params.emplace_back(name, p);
  }
  auto state = std::make_shared<ReplicateState>(std::move(params), options);
  module.attach(kReplicateKey, state);
  module.register_forward_pre_hook(
      [state](nn::Module&, std::vector<nn::Value>&) { state->before_forward(); });
  module.register_forward_hook(
      [state](nn::Module&, const std::vector<nn::Value>&, nn::Value&) { state->after_forward(); });
  return module;
}

}  // namespace tessera
