// Operations on DTensors: each picks output placements from its inputs' (sharding propagation),
// redistributes first when the inputs fit no rule — the cheapest way by the
// mesh topology's cost, logged as implicit communication — and runs the local op on every rank.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "tessera/dtensor.hpp"
#include "tessera/generator.hpp"
#include "tessera/ops.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

DTensor matmul(const DTensor& a, const DTensor& b);
DTensor mm(const DTensor& a, const DTensor& b);
DTensor bmm(const DTensor& a, const DTensor& b);

// Element-wise with broadcasting. A plain tensor operand must have one element (a 0-d tensor acts
// as a scalar; it is treated as Replicate) unless implicit replication is on; otherwise it is an
// error that says to distribute it first, as in PyTorch. Scalars and plain tensors may come first.
DTensor add(const DTensor& a, const DTensor& b);
DTensor sub(const DTensor& a, const DTensor& b);
DTensor mul(const DTensor& a, const DTensor& b);
DTensor div(const DTensor& a, const DTensor& b);
DTensor add(const DTensor& a, const Tensor& b);
DTensor sub(const DTensor& a, const Tensor& b);
DTensor mul(const DTensor& a, const Tensor& b);
DTensor div(const DTensor& a, const Tensor& b);
DTensor add(const DTensor& a, Scalar b);
DTensor sub(const DTensor& a, Scalar b);
DTensor mul(const DTensor& a, Scalar b);
DTensor div(const DTensor& a, Scalar b);
DTensor add(const Tensor& a, const DTensor& b);
DTensor sub(const Tensor& a, const DTensor& b);
DTensor mul(const Tensor& a, const DTensor& b);
DTensor div(const Tensor& a, const DTensor& b);
DTensor add(Scalar a, const DTensor& b);
DTensor sub(Scalar a, const DTensor& b);
DTensor mul(Scalar a, const DTensor& b);
DTensor div(Scalar a, const DTensor& b);
DTensor maximum(const DTensor& a, const DTensor& b);
DTensor minimum(const DTensor& a, const DTensor& b);

DTensor neg(const DTensor& a);
DTensor abs(const DTensor& a);
DTensor relu(const DTensor& a);
DTensor gelu(const DTensor& a);
DTensor exp(const DTensor& a);
DTensor log(const DTensor& a);
DTensor sqrt(const DTensor& a);
DTensor tanh(const DTensor& a);
DTensor sigmoid(const DTensor& a);

DTensor sum(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
DTensor mean(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
DTensor max(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
DTensor min(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
DTensor prod(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);

DTensor softmax(const DTensor& a, int64_t dim);
DTensor log_softmax(const DTensor& a, int64_t dim);

DTensor transpose(const DTensor& a, int64_t dim0, int64_t dim1);
DTensor permute(const DTensor& a, const std::vector<int64_t>& dims);
// Keeps shards when the sharded dims survive the reshape (or lead a merge or split whose blocks
// line up); otherwise both replicate those mesh dims first (as PyTorch's view does too).
DTensor reshape(const DTensor& a, const Shape& shape);
DTensor view(const DTensor& a, const Shape& shape);

// Joining DTensors of one mesh. cat keeps a placement the inputs share (or can share locally)
// unless it shards the joined dim: those mesh dims are redistributed first (to Replicate, or to a
// shard of another dim when that is cheaper). stack shards and keeps as cat does, its new dim
// shifting the shard dims at and after it.
DTensor cat(const std::vector<DTensor>& tensors, int64_t dim = 0);
DTensor stack(const std::vector<DTensor>& tensors, int64_t dim = 0);

// Transformer ops on DTensors (the dense forms are in ops.hpp).
// gather, scatter_add, index_select: the indexed dim is whole on every rank (replicated first when
// sharded); other dims keep their shards where all operands have them at one size. Plain indices
// count as Replicate (a local one as each rank's copy). one_hot keeps the indices' shards; num_classes -1
// reads the global maximum.
DTensor gather(const DTensor& x, int64_t dim, const DTensor& index);
DTensor gather(const DTensor& x, int64_t dim, const Tensor& index);
DTensor scatter_add(const DTensor& x, int64_t dim, const DTensor& index, const DTensor& src);
DTensor scatter_add(const DTensor& x, int64_t dim, const Tensor& index, const DTensor& src);
DTensor index_select(const DTensor& x, int64_t dim, const Tensor& index);
DTensor one_hot(const DTensor& indices, int64_t num_classes = -1);
// embedding: weight Shard(0) is vocabulary parallel (a masked lookup per rank, result Partial(sum),
// no communication), Shard(1) gives a result sharded on its last dim; indices Replicate or Shard on
// one of their dims (the result is sharded the same). Plain (or local) indices count as Replicate.
DTensor embedding(const DTensor& indices, const DTensor& weight);
DTensor embedding(const Tensor& indices, const DTensor& weight);

// q, k, v sharded alike on a batch or heads dim (before the last two) give an output sharded on it
// with no communication (a mask follows where it has that dim); otherwise they are replicated.
// dropout_p > 0 drops the attention weights the dense op drops with the same generator state.
DTensor scaled_dot_product_attention(const DTensor& q, const DTensor& k, const DTensor& v,
                                     const std::optional<DTensor>& attn_mask = std::nullopt,
                                     double dropout_p = 0.0, bool is_causal = false,
                                     std::optional<double> scale = std::nullopt, bool enable_gqa = false);

// cross_entropy (class-index targets, options as the dense form): logits and target sharded alike on
// a batch dim stay sharded; logits sharded on the class dim are replicated first, unless a
// LossParallel scope is open (below): then the loss is computed from the class shards with
// all_reduces of one value per target (max, sum of exp, target logit) and no gather.
DTensor cross_entropy(const DTensor& logits, const DTensor& target, const CrossEntropyOptions& options = {});
DTensor mse_loss(const DTensor& a, const DTensor& b, const std::string& reduction = "mean");

// Random values and dropout whose numbers are those of the same op on the full tensor, whatever the
// placements: element i (global row-major index) uses the generator's counter at offset + i, so
// Replicate ranks hold the same values and Shard ranks the slice at their global offsets. The
// generator advances by the global element count. Inside a LocalMode every rank's generator must
// stand at one state. Partial placements are refused for new values; dropout of a Partial DTensor
// scales every term by the same mask.
DTensor rand(const Shape& shape, const DeviceMesh& mesh, const Placements& placements,
             TensorOptions options = {});
DTensor randn(const Shape& shape, const DeviceMesh& mesh, const Placements& placements,
              TensorOptions options = {});
DTensor rand(const Shape& shape, const DeviceMesh& mesh, const Placements& placements, Generator& generator,
             TensorOptions options = {});
DTensor randn(const Shape& shape, const DeviceMesh& mesh, const Placements& placements, Generator& generator,
              TensorOptions options = {});
DTensor dropout(const DTensor& x, double p, bool training = true);
DTensor dropout(const DTensor& x, double p, bool training, Generator& generator);

// A new DTensor laid out like `like` (same mesh, shape and placements), as PyTorch's *_like; a
// Partial mesh dim becomes Replicate (the new values are not pending terms).
DTensor empty_like(const DTensor& like, TensorOptions options = {});
DTensor zeros_like(const DTensor& like, TensorOptions options = {});
DTensor ones_like(const DTensor& like, TensorOptions options = {});
DTensor full_like(const DTensor& like, Scalar value, TensorOptions options = {});

// Transformer building blocks on DTensors (the Tensor ops of ops.hpp). Element-wise ones keep
// shards and replicas and reduce a Partial first. where and masked_fill shard as binary ops do
// (broadcasting). tril/triu keep shards of the batch dims and a Partial sum (they are linear); the
// last two dims are replicated first. cumsum keeps shards of other dims and a Partial sum; its dim
// is replicated first. layer_norm/rms_norm keep a Shard of any dim not normalised (sequence
// parallel: no communication); normalised dims and the weight and bias are replicated first.
DTensor silu(const DTensor& x);
DTensor gelu(const DTensor& x, std::string_view approximate);
DTensor sin(const DTensor& x);
DTensor cos(const DTensor& x);
DTensor rsqrt(const DTensor& x);
DTensor clamp(const DTensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi);
DTensor where(const DTensor& cond, const DTensor& a, const DTensor& b);
DTensor where(const DTensor& cond, const DTensor& a, Scalar b);
DTensor where(const DTensor& cond, Scalar a, const DTensor& b);
DTensor masked_fill(const DTensor& x, const DTensor& mask, Scalar value);
DTensor tril(const DTensor& x, int64_t diagonal = 0);
DTensor triu(const DTensor& x, int64_t diagonal = 0);
DTensor cumsum(const DTensor& x, int64_t dim);
DTensor layer_norm(const DTensor& x, const std::vector<int64_t>& normalized_shape,
                   const std::optional<DTensor>& weight = std::nullopt,
                   const std::optional<DTensor>& bias = std::nullopt, double eps = 1e-5);
DTensor rms_norm(const DTensor& x, const std::vector<int64_t>& normalized_shape,
                 const std::optional<DTensor>& weight = std::nullopt,
                 std::optional<double> eps = std::nullopt);

inline DTensor operator+(const DTensor& a, const DTensor& b) { return add(a, b); }
inline DTensor operator-(const DTensor& a, const DTensor& b) { return sub(a, b); }
inline DTensor operator*(const DTensor& a, const DTensor& b) { return mul(a, b); }
inline DTensor operator/(const DTensor& a, const DTensor& b) { return div(a, b); }
inline DTensor operator+(const DTensor& a, const Tensor& b) { return add(a, b); }
inline DTensor operator-(const DTensor& a, const Tensor& b) { return sub(a, b); }
inline DTensor operator*(const DTensor& a, const Tensor& b) { return mul(a, b); }
inline DTensor operator/(const DTensor& a, const Tensor& b) { return div(a, b); }
inline DTensor operator+(const DTensor& a, Scalar b) { return add(a, b); }
inline DTensor operator-(const DTensor& a, Scalar b) { return sub(a, b); }
inline DTensor operator*(const DTensor& a, Scalar b) { return mul(a, b); }
inline DTensor operator/(const DTensor& a, Scalar b) { return div(a, b); }
inline DTensor operator+(const Tensor& a, const DTensor& b) { return add(a, b); }
inline DTensor operator-(const Tensor& a, const DTensor& b) { return sub(a, b); }
inline DTensor operator*(const Tensor& a, const DTensor& b) { return mul(a, b); }
inline DTensor operator/(const Tensor& a, const DTensor& b) { return div(a, b); }
inline DTensor operator+(Scalar a, const DTensor& b) { return add(a, b); }
inline DTensor operator-(Scalar a, const DTensor& b) { return sub(a, b); }
inline DTensor operator*(Scalar a, const DTensor& b) { return mul(a, b); }
inline DTensor operator/(Scalar a, const DTensor& b) { return div(a, b); }
inline DTensor operator-(const DTensor& a) { return neg(a); }

// While on, a plain multi-element tensor mixed with a DTensor is treated as Replicate (PyTorch:
// implicit_replication()); off by default, when it is an error. Per thread, as PyTorch's context
// manager: another thread (or another world's program) never sees this one's setting.
void set_implicit_replication(bool enabled);
bool implicit_replication();
// PyTorch: `with implicit_replication():` -- on for this scope, then back to what it was.
class ImplicitReplication {
 public:
  ImplicitReplication() : previous_(implicit_replication()) { set_implicit_replication(true); }
  ~ImplicitReplication() { set_implicit_replication(previous_); }
  ImplicitReplication(const ImplicitReplication&) = delete;
  ImplicitReplication& operator=(const ImplicitReplication&) = delete;

 private:
  bool previous_;
};

// While on, cross_entropy keeps logits sharded on the class dim (PyTorch: loss_parallel()); off by
// default. Per thread, as ImplicitReplication.
void set_loss_parallel(bool enabled);
bool loss_parallel();
// PyTorch: `with loss_parallel():` -- on for this scope, then back to what it was.
class LossParallel {
 public:
  LossParallel() : previous_(loss_parallel()) { set_loss_parallel(true); }
  ~LossParallel() { set_loss_parallel(previous_); }
  LossParallel(const LossParallel&) = delete;
  LossParallel& operator=(const LossParallel&) = delete;

 private:
  bool previous_;
};

}  // namespace tessera
