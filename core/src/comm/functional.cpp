// tessera::dist::functional: the collectives of dist.hpp on a fresh output, recorded for autograd.
// A gather or scatter along dim d runs along dim 0 of the input with dims 0 and d swapped (the
// blocks of dim d are then the blocks of dim 0), and swaps them back.
#include <fmt/format.h>

#include <string>
#include <typeinfo>

#include "autograd/record.hpp"
#include "tessera/dist_functional.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
#include "tessera/ops.hpp"
#include "world/world.hpp"

namespace tessera::dist::functional {
namespace {

// The ranks a collective runs over, as seen from the input: its group size and each input rank's
// group rank.
struct Members {
  int size = 0;
  RankMap<int> group_rank;
};

std::string name_of(const char* op) { return fmt::format("dist::functional::{}", op); }

void require_input(const char* op, const Tensor& input) {
  if (!input.defined()) throw Error(fmt::format("{}: the input is undefined", name_of(op)));
  if (!input.is_local())
    throw Error(fmt::format(
        "{}: the input must be a local tensor (one shard per rank); got a plain tensor of shape {}",
        name_of(op), input.shape().to_string()));
}

// Every rank of the input must take part: a rank no fibre holds would have no defined output.
Members members_of(const char* op, const Tensor& input, const ProcessGroup& group) {
  Members members;
  const RankSet ranks = input.ranks();
  if (group.is_default()) {
    const world::WorldState& w = world::current();
    // The default group is every rank the input holds, or in a world spread over processes (where
    // a tensor holds only this process's ranks) the whole world.
    if (w.distributed()) {
      members.size = w.size();
      for (int r : ranks) members.group_rank.set(r, r);
    } else {
      members.size = static_cast<int>(ranks.size());
      for (size_t i = 0; i < ranks.size(); ++i) members.group_rank.set(ranks[i], static_cast<int>(i));
    }
    return members;
  }
  members.size = group.size();
  for (const std::vector<int>& fibre : group.fibres())
    for (size_t i = 0; i < fibre.size(); ++i)
      if (ranks.contains(fibre[i])) members.group_rank.set(fibre[i], static_cast<int>(i));
  for (int r : ranks)
    if (!members.group_rank.contains(r))
      throw Error(fmt::format(
          "{}: the input holds rank {}, which is in no fibre of group {}; every rank of the input "
          "must be a member of the group",
          name_of(op), r, group.to_string()));
  return members;
}

int64_t checked_dim(const char* op, const char* what, int64_t dim, const Tensor& input) {
  const int64_t n = input.dim();
  if (n == 0)
    throw Error(fmt::format("{}: the input is 0-dimensional; it needs at least one dim to {} along",
                            name_of(op), what));
  if (dim < -n || dim >= n)
    throw Error(fmt::format("{}: {} dim {} is out of range for a {}-dimensional input; expected -{}..{}",
                            name_of(op), what, dim, n, n, n - 1));
  return dim < 0 ? dim + n : dim;
}

// Dims 0 and d swapped, laid out contiguously (so dim 0's blocks are contiguous).
Tensor swapped(const Tensor& t, int64_t d) { return (d == 0 ? t : t.transpose(0, d)).contiguous(); }

// Per rank, a tensor like the shard with dim 0 resized by `rows`.
template <class Rows>
Tensor with_rows(const Tensor& like, Rows&& rows) {
  return tensor_map(like, [&](int rank, const Tensor& shard) {
    Shape shape = shard.sizes();
    shape[0] = rows(rank, shape[0]);
    return empty(shape, TensorOptions(shard.dtype()).backend(shard.backend()));
  });
}

// The gradient of a local output, as a local tensor over its ranks (the engine hands over local
// gradients for local outputs; this keeps the collectives safe from a plain one).
Tensor local_grad(const Tensor& grad, const RankSet& ranks) {
  if (grad.is_local()) return grad;
  RankMap<Tensor> shards;
  for (int r : ranks) shards.set(r, grad.clone());
  return local_tensor(std::move(shards));
}

bool is_linear(const ReduceOp& op) {
  return op.kind() == ReduceOp::SUM || op.kind() == ReduceOp::AVG || op.kind() == ReduceOp::PREMUL_SUM;
}

void require_differentiable(const char* op, const ReduceOp& reduce) {
  if (!is_linear(reduce))
    throw Error(
        fmt::format("{}: reduce op {} is not differentiable, and the input requires grad; SUM, AVG and "
                    "PREMUL_SUM are (or detach() the input, or call it under a NoGradGuard)",
                    name_of(op), reduce.to_string()));
}

// The forwards, recording nothing.

Tensor all_reduce_values(const Tensor& input, const ReduceOp& op, const ProcessGroup& group) {
  Tensor out = input.clone();
  dist::all_reduce(out, op, group);
  return out;
}

Tensor all_gather_values(const Tensor& input, int64_t dim, const ProcessGroup& group, int size) {
  const Tensor blocks = swapped(input, dim);
  Tensor gathered = with_rows(blocks, [size](int, int64_t rows) { return rows * size; });
  dist::all_gather_into_tensor(gathered, blocks, group);
  return swapped(gathered, dim);
}

Tensor reduce_scatter_values(const Tensor& input, const ReduceOp& op, int64_t dim, const ProcessGroup& group,
                             int size) {
  for (const auto& [rank, shard] : input.shards())
    if (shard.size(dim) % size != 0)
      throw Error(fmt::format(
          "{}: the input's dim {} has size {} on rank {}, which the group size {} does not divide",
          name_of("reduce_scatter_tensor"), dim, shard.size(dim), rank, size));
  const Tensor blocks = swapped(input, dim);
  Tensor out = with_rows(blocks, [size](int, int64_t rows) { return rows / size; });
  dist::reduce_scatter_tensor(out, blocks, op, group);
  return swapped(out, dim);
}

Tensor all_to_all_values(const Tensor& input, const std::vector<SymInt>& output_splits,
                         const std::vector<SymInt>& input_splits, const ProcessGroup& group) {
  Tensor out = with_rows(input, [&](int rank, int64_t rows) {
    if (output_splits.empty()) return rows;
    int64_t total = 0;
    for (size_t i = 0; i < output_splits.size(); ++i) {
      const int64_t split = output_splits[i].at(rank);
      if (split < 0)
        throw Error(fmt::format("{}: output split {} is {} on rank {}; splits must be non-negative",
                                name_of("all_to_all_single"), i, split, rank));
      total += split;
    }
    return total;
  });
  dist::all_to_all_single(out, input, output_splits, input_splits, group);
  return out;
}

Tensor broadcast_values(const Tensor& input, int src, const ProcessGroup& group) {
  Tensor out = input.clone();
  dist::broadcast(out, src, group);
  return out;
}

// Explicit splits of dim 0 for `splits` as given, or the equal splits an empty list means.
std::vector<SymInt> explicit_splits(const std::vector<SymInt>& splits, const Tensor& t, int size) {
  if (!splits.empty()) return splits;
  RankMap<int64_t> each;
  for (const auto& [rank, shard] : t.shards()) each.set(rank, shard.size(0) / size);
  return std::vector<SymInt>(static_cast<size_t>(size), SymInt(LocalInt(std::move(each))));
}

// Runs a forward without recording (the ops it is built from must not record nodes of their own).
// The collective it runs names itself in its errors; they are prefixed with the call the user made.
template <class F>
Tensor forward(const char* op, F&& values) {
  try {
    return autograd::untracked(values);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (typeid(e) != typeid(Error) || what.starts_with("dist::functional::")) throw;
    throw Error(fmt::format("{}: {}", name_of(op), what));
  }
}

}  // namespace

Tensor all_reduce(const Tensor& input, ReduceOp op, const ProcessGroup& group) {
  require_input("all_reduce", input);
  members_of("all_reduce", input, group);
  const bool recorded = autograd::any_requires_grad(input);
  if (recorded) require_differentiable("all_reduce", op);
  Tensor out = forward("all_reduce", [&] { return all_reduce_values(input, op, group); });
  if (!recorded) return out;
  const RankSet ranks = input.ranks();
  // y = op over x is linear and the same on every member: its transpose is the same reduction.
  autograd::record("AllReduceBackward", {input}, {out}, [op, group, ranks](std::vector<Tensor>& grads) {
    return std::vector<Tensor>{all_reduce_values(local_grad(grads[0], ranks), op, group)};
  });
  return out;
}

Tensor all_gather_tensor(const Tensor& input, int64_t gather_dim, const ProcessGroup& group) {
  require_input("all_gather_tensor", input);
  const int64_t dim = checked_dim("all_gather_tensor", "gather", gather_dim, input);
  const int size = members_of("all_gather_tensor", input, group).size;
  const bool recorded = autograd::any_requires_grad(input);
  Tensor out = forward("all_gather_tensor", [&] { return all_gather_values(input, dim, group, size); });
  if (!recorded) return out;
  const RankSet ranks = out.ranks();
  autograd::record("AllGatherBackward", {input}, {out},
                   [dim, group, size, ranks](std::vector<Tensor>& grads) {
                     return std::vector<Tensor>{
                         reduce_scatter_values(local_grad(grads[0], ranks), ReduceOp::SUM, dim, group, size)};
                   });
  return out;
}

Tensor reduce_scatter_tensor(const Tensor& input, ReduceOp op, int64_t scatter_dim,
                             const ProcessGroup& group) {
  require_input("reduce_scatter_tensor", input);
  const int64_t dim = checked_dim("reduce_scatter_tensor", "scatter", scatter_dim, input);
  const int size = members_of("reduce_scatter_tensor", input, group).size;
  const bool recorded = autograd::any_requires_grad(input);
  if (recorded) require_differentiable("reduce_scatter_tensor", op);
  Tensor out =
      forward("reduce_scatter_tensor", [&] { return reduce_scatter_values(input, op, dim, group, size); });
  if (!recorded) return out;
  const RankSet ranks = out.ranks();
  autograd::record("ReduceScatterBackward", {input}, {out},
                   [op, dim, group, size, ranks](std::vector<Tensor>& grads) {
                     Tensor g = all_gather_values(local_grad(grads[0], ranks), dim, group, size);
                     if (op.kind() == ReduceOp::AVG) g = g / size;
                     if (op.kind() == ReduceOp::PREMUL_SUM) g = g * op.factor();
                     return std::vector<Tensor>{g};
                   });
  return out;
}

Tensor all_to_all_single(const Tensor& input, const std::vector<SymInt>& output_splits,
                         const std::vector<SymInt>& input_splits, const ProcessGroup& group) {
  require_input("all_to_all_single", input);
  checked_dim("all_to_all_single", "split", 0, input);
  const int size = members_of("all_to_all_single", input, group).size;
  const bool recorded = autograd::any_requires_grad(input);
  Tensor out = forward("all_to_all_single",
                       [&] { return all_to_all_values(input, output_splits, input_splits, group); });
  if (!recorded) return out;
  // The backward sends every block back where it came from. Empty splits mean equal splits of
  // the forward's own rows, which the gradient's rows need not divide the same way: spell them out.
  std::vector<SymInt> sent = explicit_splits(input_splits, input, size);
  std::vector<SymInt> received = explicit_splits(output_splits, out, size);
  const RankSet ranks = out.ranks();
  autograd::record(
      "AllToAllBackward", {input}, {out},
      [sent = std::move(sent), received = std::move(received), group, ranks](std::vector<Tensor>& grads) {
        return std::vector<Tensor>{all_to_all_values(local_grad(grads[0], ranks), sent, received, group)};
      });
  return out;
}

Tensor broadcast(const Tensor& input, int src, const ProcessGroup& group) {
  require_input("broadcast", input);
  const Members members = members_of("broadcast", input, group);
  if (src < 0 || src >= members.size)
    throw Error(fmt::format("{}: src {} is not a group rank; expected 0..{}", name_of("broadcast"), src,
                            members.size - 1));
  const bool recorded = autograd::any_requires_grad(input);
  Tensor out = forward("broadcast", [&] { return broadcast_values(input, src, group); });
  if (!recorded) return out;
  const RankSet ranks = out.ranks();
  const RankMap<int> group_rank = members.group_rank;
  // Every member's output is src's input: src's input gets the sum of the members' gradients, the
  // others' inputs were not read.
  autograd::record("BroadcastBackward", {input}, {out},
                   [src, group, ranks, group_rank](std::vector<Tensor>& grads) {
                     Tensor summed = local_grad(grads[0], ranks).clone();
                     dist::reduce(summed, src, ReduceOp::SUM, group);
                     return std::vector<Tensor>{tensor_map(summed, [&](int rank, const Tensor& shard) {
                       return group_rank.at(rank) == src ? shard : zeros_like(shard);
                     })};
                   });
  return out;
}

}  // namespace tessera::dist::functional
