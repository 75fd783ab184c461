// tessera::dist collectives on local tensors: split the call into fibres, lay each member's data
// out as the collective's input buffer, run the schedule, write the outputs back in place.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "dispatch/user_call.hpp"
#include "autograd/record.hpp"
#include "comm/call.hpp"
#include "comm/mailbox.hpp"
#include "comm/rank_programs.hpp"
#include "comm/run_collective.hpp"
#include "comm/comm_observer.hpp"
#include "tensor/internal.hpp"
#include "tensor/kernel_operand.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/dist.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
#include "tessera/ops.hpp"
#include "world/world.hpp"

namespace tessera {

std::string ReduceOp::to_string() const {
  switch (kind_) {
    case SUM:
      return "SUM";
    case AVG:
      return "AVG";
    case PRODUCT:
      return "PRODUCT";
    case MIN:
      return "MIN";
    case MAX:
      return "MAX";
    case BAND:
      return "BAND";
    case BOR:
      return "BOR";
    case BXOR:
      return "BXOR";
    case PREMUL_SUM:
      return fmt::format("PREMUL_SUM({})", factor_);
  }
  return "unknown";
}

namespace dist {
namespace {

using Fibre = std::vector<int>;  // global ranks in group-rank order

void enter(const char* op) {
  if (in_per_rank_region())
    throw Error(
        fmt::format("{}: collectives cannot be issued inside run_per_rank or any per-rank function; issue "
                    "it on the local tensor outside",
                    op));
  comm::require_no_pending_messages(op);
}

void require_local(const char* op, const Tensor& t, const char* what) {
  if (!t.defined()) throw Error(fmt::format("{}: {} is undefined", op, what));
  if (!t.is_local())
    throw Error(
        fmt::format("{}: {} must be a local tensor (one shard per rank); got a plain tensor", op, what));
}

// Maps the user's op onto the schedule's (AVG and PREMUL_SUM are a SUM with scaling around it)
// after checking it suits the dtype.
int32_t schedule_op(const char* op, const ReduceOp& reduce, DType dtype) {
  const bool integer_only =
      reduce.kind() == ReduceOp::BAND || reduce.kind() == ReduceOp::BOR || reduce.kind() == ReduceOp::BXOR;
  const bool float_only = reduce.kind() == ReduceOp::AVG || reduce.kind() == ReduceOp::PREMUL_SUM;
  if (integer_only && !is_integral(dtype, true))
    throw Error(fmt::format("{}: reduce op {} needs an integer or bool tensor, got {}", op,
                            reduce.to_string(), dtype_name(dtype)));
  if (float_only && !is_floating(dtype))
    throw Error(fmt::format("{}: reduce op {} needs a floating tensor, got {}", op, reduce.to_string(),
                            dtype_name(dtype)));
  return comm::schedule_reduce_op(reduce);
}

Tensor after_reduce(const Tensor& output, const ReduceOp& reduce, int group_size) {
  return reduce.kind() == ReduceOp::AVG ? output / group_size : output;
}

// t.contiguous().reshape({-1}); a dense contiguous shard (the usual case) becomes its 1-d view
// directly, without the op machinery (a shard never requires grad), and a dense 1-d shard is its
// own view.
Tensor flat(const Tensor& t) {
  if (t.is_local() || !t.defined() || !t.impl()->is_contiguous()) return t.contiguous().reshape({-1});
  const TensorImpl& self = *t.impl();
  if (self.dim() == 1 && self.strides()[0] == 1) return t;
  return Tensor(self.view({self.numel()}, {1}, self.offset(), "reshape"));
}

// Flat blocks as one flat buffer: where they lie one after another in the same bytes (distribute_
// tensor cuts a scatter's pieces so), a view over them all; otherwise their concatenation.
Tensor joined(const std::vector<Tensor>& blocks) {
  const TensorImpl& first = *blocks.front().impl();
  const int64_t each = first.numel();
  const void* bytes = first.storage()->data;
  bool adjacent = bytes != nullptr;
  for (size_t i = 0; i < blocks.size() && adjacent; ++i) {
    const TensorImpl& block = *blocks[i].impl();
    adjacent = block.storage()->data == bytes && block.dtype() == first.dtype() && block.numel() == each &&
               block.offset() == first.offset() + static_cast<int64_t>(i) * each;
  }
  const int64_t total = each * static_cast<int64_t>(blocks.size());  // elements of blocks that exist
  if (!adjacent ||
      static_cast<size_t>(first.offset() + total) * itemsize(first.dtype()) > first.storage()->bytes)
    return cat(blocks);
  return Tensor(first.view({total}, {1}, first.offset(), "cat"));
}

// A shard as a reduction's input buffer: flat, scaled first for PREMUL_SUM. The shard itself is
// not copied into a temporary on the way (a reference-count round trip per rank).
Tensor reduce_input(const Tensor& shard, const ReduceOp& reduce) {
  return reduce.kind() == ReduceOp::PREMUL_SUM ? flat(shard * reduce.factor()) : flat(shard);
}

void require_root(const char* op, int root, size_t group_size) {
  if (root < 0 || static_cast<size_t>(root) >= group_size)
    throw Error(fmt::format("{}: root {} is not a group rank; expected 0..{}", op, root, group_size - 1));
}

// The first member this process hosts (every fibre of a call has one).
int first_hosted(const comm::Call& call, const Fibre& members) {
  for (int m : members)
    if (call.hosts(m)) return m;
  throw Error("collective: no member of the fibre is hosted here (internal error)");
}

// Every member's shard of `t` must have the same shape (the collective moves equal blocks). Shards
// hosted elsewhere are checked there; the fingerprints compare the processes' shapes. Returns the
// first hosted shard's own shape: valid while `t` holds that shard.
const Shape& common_shape(const char* op, const Tensor& t, const comm::Call& call, const Fibre& members,
                          const char* what) {
  const int first_rank = first_hosted(call, members);
  const RankMap<Tensor>& shards = t.shards();
  const Shape& first = shards.at(first_rank).sizes();
  for (int m : members)
    if (m != first_rank && call.hosts(m) && shards.at(m).sizes() != first)
      throw Error(
          fmt::format("{}: {} has shape {} on rank {} but {} on rank {}; every member needs the same shape",
                      op, what, shape_text(first), first_rank, shape_text(shards.at(m).sizes()), m));
  return first;
}

// Each member's input buffer: made from its shard when hosted here, undefined otherwise.
template <class Make>
std::vector<Tensor> member_inputs(const comm::Call& call, const Fibre& members, Make&& make) {
  std::vector<Tensor> inputs;
  inputs.reserve(members.size());
  for (int m : members) inputs.push_back(call.hosts(m) ? make(m) : Tensor());
  return inputs;
}

void require_list(const char* op, const std::vector<Tensor>& list, size_t group_size, const RankSet& ranks,
                  const char* what) {
  if (list.size() != group_size)
    throw Error(fmt::format("{}: {} has {} tensors, expected one per group rank ({})", op, what, list.size(),
                            group_size));
  for (const Tensor& t : list) {
    require_local(op, t, what);
    if (t.ranks() != ranks)
      throw Error(fmt::format("{}: {} holds a tensor over ranks {}, expected {}", op, what,
                              t.ranks().to_string(), ranks.to_string()));
  }
}

// Whether `block` already is `shard`'s elements: the schedule computed into the shard's own buffer
// (flat's view of it), so there is nothing to write back.
bool in_place(const Tensor& shard, const Tensor& block) {
  if (shard.is_local() || block.is_local() || !shard.defined() || !block.defined()) return false;
  const TensorImpl& s = *shard.impl();
  const TensorImpl& b = *block.impl();
  return s.storage() == b.storage() && s.offset() == b.offset() && s.dtype() == b.dtype() &&
         s.numel() == b.numel() && s.is_contiguous() && b.is_contiguous();
}

// A result lands in the user's shard in place. A whole-buffer result is not copied: the shard
// takes its memory (exchange; the buffer is discarded right after) or, for a result other ranks'
// shards receive too (run_collective's shared outputs), shares it copy-on-write. A shard whose
// address was handed out (data_ptr, to_dlpack) refuses both (Storage, "Exposure") and the result is
// copied into its own bytes, where the holder of that address reads it.
enum class Landing { take, share };
Landing landing_of(const comm::SharedResults& results) {
  return results.shared ? Landing::share : Landing::take;
}
void write_back(const Tensor& shard, const Tensor& block, Landing landing = Landing::take) {
  if (in_place(shard, block)) return;
  const bool moved = landing == Landing::share ? detail::share_storage(shard, block)
                                               : detail::exchange_storage(shard, block);
  if (!moved) Tensor(shard).copy_(block.reshape(shard.sizes()));  // a handle to the same shard
}

// Writes block [offset, offset + n) of a flat result into `shard`, a tensor of an output list: one
// copy of the bytes when both are dense, of one dtype and backend and apart, without the two views
// and the dispatch of copy_ (an all_gather into a list writes p^2 such blocks of a few elements).
void write_block(const Tensor& shard, const Tensor& result, int64_t offset, int64_t n) {
  if (shard.defined() && !shard.is_local() && result.defined() && !result.is_local()) {
    const TensorImpl& to = *shard.impl();
    const TensorImpl& from = *result.impl();
    if (to.is_contiguous() && from.is_contiguous() && to.numel() == n && from.numel() >= offset + n &&
        to.dtype() == from.dtype() && &to.backend() == &from.backend() && to.storage() != from.storage())
      return dispatch::copy_range(from, offset, to, 0, n);
  }
  write_back(shard, result.narrow(0, offset, n));
}

// What one API call runs on (comm/call.hpp): checked, covered and (across processes) agreed.
comm::Call fibres_for(const char* op, const Tensor& t, const ProcessGroup& group,
                      comm::Fingerprint fingerprint = {}) {
  enter(op);
  require_local(op, t, "the tensor");
  // Fibres of one group may legitimately differ in shape (a DTensor sharded unevenly along another
  // mesh dim), so only a single fibre's shape is part of what every process must agree on; a shape
  // mismatch inside a fibre still fails, as a message of the wrong length.
  if (fingerprint.shape.empty() && comm::checks_calls())
    fingerprint.shape = group.is_default() || group.fibres().size() == 1 ? comm::shape_of(t) : "per fibre";
  return comm::begin_call(op, t, group, fingerprint);
}

comm::Fingerprint reducing(const ReduceOp& op, int root = -1) { return {{}, op, root}; }
comm::Fingerprint rooted(int root) { return {{}, {}, root}; }

}  // namespace

namespace {

// A local tensor's all_reduce, in a frame of its own: a rank's program (ts::spawn) passes through
// all_reduce on its way to wait in the scheduler, and returns through it once per collective, so
// that frame is kept to a few cache lines.
[[gnu::noinline]] void all_reduce_local(Tensor& tensor, ReduceOp op, const ProcessGroup& group) {
  const dispatch::UserCall user_call("ts::dist::all_reduce");  // names it in missing-kernel errors
  autograd::check_inplace(tensor, "dist::all_reduce",
                          "use ts::dist::functional::all_reduce, which returns a new tensor");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("all_reduce", tensor, group, reducing(op));
  for (const Fibre& members : covered.fibres()) {
    const Shape& shape = common_shape("all_reduce", tensor, covered, members, "the tensor");
    const int32_t sop = schedule_op("all_reduce", op, tensor.dtype());
    const RankMap<Tensor>& shards = tensor.shards();
    const std::vector<Tensor> inputs =
        member_inputs(covered, members, [&](int m) { return reduce_input(shards.at(m), op); });
    // The inputs are the shards themselves (or temporaries), whose values the results replace.
    const comm::SharedResults results = comm::run_collective_shared(
        covered.context, TESSERA_COLL_ALL_REDUCE, members, inputs, shape_numel(shape), sop, 0, true);
    const comm::RankResults& outputs = results.outputs;
    size_t scaled = SIZE_MAX;  // ranks given one output share one result, scaled once
    Tensor result;
    const Landing landing = landing_of(results);
    for (size_t i = 0; i < members.size(); ++i) {
      if (!covered.hosts(members[i])) continue;
      if (outputs.index(i) != scaled) {
        scaled = outputs.index(i);
        result = after_reduce(outputs[i], op, static_cast<int>(members.size()));
      }
      write_back(shards.at(members[i]), result, landing);
    }
  }
}

}  // namespace

void all_reduce(Tensor& tensor, ReduceOp op, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(tensor))
    return comm::program::all_reduce(*program, tensor, op, group);
  all_reduce_local(tensor, op, group);
}

void broadcast(Tensor& tensor, int src, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(tensor))
    return comm::program::broadcast(*program, tensor, src, group);
  const dispatch::UserCall user_call("ts::dist::broadcast");  // names it in missing-kernel errors
  autograd::check_inplace(tensor, "dist::broadcast",
                          "use ts::dist::functional::broadcast, which returns a new tensor");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("broadcast", tensor, group, rooted(src));
  for (const Fibre& members : covered.fibres()) {
    require_root("broadcast", src, members.size());
    const Shape shape = common_shape("broadcast", tensor, covered, members, "the tensor");
    const std::vector<Tensor> inputs =
        member_inputs(covered, members, [&](int m) { return flat(tensor.shards().at(m)); });
    const comm::SharedResults results =
        comm::run_collective_shared(covered.context, TESSERA_COLL_BROADCAST, members, inputs,
                                    shape_numel(shape), TESSERA_REDUCE_SUM, src);
    const Landing landing = landing_of(results);
    for (size_t i = 0; i < members.size(); ++i)
      if (covered.hosts(members[i])) write_back(tensor.shards().at(members[i]), results.outputs[i], landing);
  }
}

void reduce(Tensor& tensor, int dst, ReduceOp op, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(tensor))
    return comm::program::reduce(*program, tensor, dst, op, group);
  const dispatch::UserCall user_call("ts::dist::reduce");  // names it in missing-kernel errors
  autograd::check_inplace(tensor, "dist::reduce",
                          "use ts::dist::functional::all_reduce, which returns a new tensor on every rank "
                          "(there is no functional reduce)");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("reduce", tensor, group, reducing(op, dst));
  for (const Fibre& members : covered.fibres()) {
    require_root("reduce", dst, members.size());
    const Shape shape = common_shape("reduce", tensor, covered, members, "the tensor");
    const int32_t sop = schedule_op("reduce", op, tensor.dtype());
    const std::vector<Tensor> inputs =
        member_inputs(covered, members, [&](int m) { return reduce_input(tensor.shards().at(m), op); });
    const std::vector<Tensor> outputs = comm::run_collective(covered.context, TESSERA_COLL_REDUCE, members,
                                                             inputs, shape_numel(shape), sop, dst);
    const int root = members[static_cast<size_t>(dst)];
    if (covered.hosts(root))
      write_back(tensor.shards().at(root),
                 after_reduce(outputs[static_cast<size_t>(dst)], op, static_cast<int>(members.size())));
  }
}

void all_gather(std::vector<Tensor>& outputs, const Tensor& tensor, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(tensor))
    return comm::program::all_gather(*program, outputs, tensor, group);
  for (const Tensor& output : outputs)
    autograd::check_inplace(output, "dist::all_gather",
                            "use ts::dist::functional::all_gather_tensor, which returns a new tensor");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("all_gather", tensor, group);
  for (const Fibre& members : covered.fibres()) {
    require_list("all_gather", outputs, members.size(), tensor.ranks(), "the output list");
    const Shape shape = common_shape("all_gather", tensor, covered, members, "the tensor");
    const std::vector<Tensor> inputs =
        member_inputs(covered, members, [&](int m) { return flat(tensor.shards().at(m)); });
    const int64_t n = shape_numel(shape);
    const std::vector<Tensor> gathered =
        comm::run_collective(covered.context, TESSERA_COLL_ALL_GATHER, members, inputs, n);
    for (size_t j = 0; j < members.size(); ++j)
      if (covered.hosts(members[j]))
        for (size_t i = 0; i < members.size(); ++i)
          write_block(outputs[i].shards().at(members[j]), gathered[j], static_cast<int64_t>(i) * n, n);
  }
}

void all_gather_into_tensor(Tensor& output, const Tensor& input, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(input))
    return comm::program::all_gather_into_tensor(*program, output, input, group);
  const dispatch::UserCall user_call(
      "ts::dist::all_gather_into_tensor");  // names it in missing-kernel errors
  autograd::check_inplace(output, "dist::all_gather_into_tensor",
                          "use ts::dist::functional::all_gather_tensor, which returns a new tensor");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("all_gather_into_tensor", input, group);
  for (const Fibre& members : covered.fibres()) {
    require_local("all_gather_into_tensor", output, "the output");
    const Shape shape = common_shape("all_gather_into_tensor", input, covered, members, "the input");
    Shape expected = shape.empty() ? Shape{static_cast<int64_t>(members.size())} : shape;
    if (!shape.empty()) expected[0] *= static_cast<int64_t>(members.size());
    const std::vector<Tensor> inputs = member_inputs(covered, members, [&](int m) {
      if (output.shards().at(m).sizes() != expected)
        throw Error(fmt::format(
            "all_gather_into_tensor: the output on rank {} has shape {}, expected {} (the input's "
            "dim 0 times the group size {})",
            m, shape_text(output.shards().at(m).sizes()), shape_text(expected), members.size()));
      return flat(input.shards().at(m));
    });
    const std::vector<Tensor> gathered =
        comm::run_collective(covered.context, TESSERA_COLL_ALL_GATHER, members, inputs, shape_numel(shape));
    for (size_t j = 0; j < members.size(); ++j)
      if (covered.hosts(members[j])) write_back(output.shards().at(members[j]), gathered[j]);
  }
}

void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                    const ProcessGroup& group) {
  if (const auto* program = comm::program_for(output))
    return comm::program::reduce_scatter(*program, output, inputs, op, group);
  const dispatch::UserCall user_call("ts::dist::reduce_scatter");  // names it in missing-kernel errors
  autograd::check_inplace(output, "dist::reduce_scatter",
                          "use ts::dist::functional::reduce_scatter_tensor, which returns a new tensor");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("reduce_scatter", output, group, reducing(op));
  for (const Fibre& members : covered.fibres()) {
    require_list("reduce_scatter", inputs, members.size(), output.ranks(), "the input list");
    const Shape shape = common_shape("reduce_scatter", output, covered, members, "the output");
    const int32_t sop = schedule_op("reduce_scatter", op, output.dtype());
    const std::vector<Tensor> buffers = member_inputs(covered, members, [&](int m) {
      std::vector<Tensor> blocks;
      for (size_t i = 0; i < members.size(); ++i) {
        if (inputs[i].shards().at(m).sizes() != shape)
          throw Error(
              fmt::format("reduce_scatter: input {} has shape {} on rank {}, expected the output's shape {}",
                          i, shape_text(inputs[i].shards().at(m).sizes()), m, shape_text(shape)));
        blocks.push_back(reduce_input(inputs[i].shards().at(m), op));
      }
      return cat(blocks);
    });
    const std::vector<Tensor> results = comm::run_collective(covered.context, TESSERA_COLL_REDUCE_SCATTER,
                                                             members, buffers, shape_numel(shape), sop);
    for (size_t i = 0; i < members.size(); ++i)
      if (covered.hosts(members[i]))
        write_back(output.shards().at(members[i]),
                   after_reduce(results[i], op, static_cast<int>(members.size())));
  }
}

void reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(input))
    return comm::program::reduce_scatter_tensor(*program, output, input, op, group);
  const dispatch::UserCall user_call("ts::dist::reduce_scatter_tensor");  // names it in missing-kernel errors
  autograd::check_inplace(output, "dist::reduce_scatter_tensor",
                          "use ts::dist::functional::reduce_scatter_tensor, which returns a new tensor");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("reduce_scatter_tensor", input, group, reducing(op));
  for (const Fibre& members : covered.fibres()) {
    require_local("reduce_scatter_tensor", output, "the output");
    const Shape in_shape = common_shape("reduce_scatter_tensor", input, covered, members, "the input");
    const Shape out_shape = common_shape("reduce_scatter_tensor", output, covered, members, "the output");
    if (shape_numel(in_shape) != shape_numel(out_shape) * static_cast<int64_t>(members.size()))
      throw Error(fmt::format(
          "reduce_scatter_tensor: input shape {} must hold group size ({}) times the output shape {}",
          shape_text(in_shape), members.size(), shape_text(out_shape)));
    const int32_t sop = schedule_op("reduce_scatter_tensor", op, input.dtype());
    const std::vector<Tensor> buffers =
        member_inputs(covered, members, [&](int m) { return reduce_input(input.shards().at(m), op); });
    const std::vector<Tensor> results = comm::run_collective(covered.context, TESSERA_COLL_REDUCE_SCATTER,
                                                             members, buffers, shape_numel(out_shape), sop);
    for (size_t i = 0; i < members.size(); ++i)
      if (covered.hosts(members[i]))
        write_back(output.shards().at(members[i]),
                   after_reduce(results[i], op, static_cast<int>(members.size())));
  }
}

void all_to_all(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(inputs.empty() ? Tensor() : inputs.front()))
    return comm::program::all_to_all(*program, outputs, inputs, group);
  for (const Tensor& output : outputs)
    autograd::check_inplace(output, "dist::all_to_all",
                            "use ts::dist::functional::all_to_all_single, which returns a new tensor");
  const comm::CollectiveCall call;
  if (inputs.empty()) throw Error("all_to_all: the input list is empty");
  const comm::Call covered = fibres_for("all_to_all", inputs.front(), group);
  for (const Fibre& members : covered.fibres()) {
    require_list("all_to_all", inputs, members.size(), inputs.front().ranks(), "the input list");
    require_list("all_to_all", outputs, members.size(), inputs.front().ranks(), "the output list");
    const Shape shape = common_shape("all_to_all", inputs.front(), covered, members, "input 0");
    const std::vector<Tensor> buffers = member_inputs(covered, members, [&](int m) {
      std::vector<Tensor> blocks;
      for (size_t j = 0; j < members.size(); ++j) {
        if (inputs[j].shards().at(m).sizes() != shape)
          throw Error(fmt::format("all_to_all: input {} has shape {} on rank {}, expected {} like input 0", j,
                                  shape_text(inputs[j].shards().at(m).sizes()), m, shape_text(shape)));
        blocks.push_back(flat(inputs[j].shards().at(m)));
      }
      return cat(blocks);
    });
    const int64_t n = shape_numel(shape);
    const std::vector<Tensor> results =
        comm::run_collective(covered.context, TESSERA_COLL_ALL_TO_ALL, members, buffers, n);
    for (size_t j = 0; j < members.size(); ++j)
      if (covered.hosts(members[j]))
        for (size_t i = 0; i < members.size(); ++i)
          write_block(outputs[i].shards().at(members[j]), results[j], static_cast<int64_t>(i) * n, n);
  }
}

void scatter(Tensor& output, const std::vector<Tensor>& inputs, int src, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(output))
    return comm::program::scatter(*program, output, inputs, src, group);
  autograd::check_inplace(output, "dist::scatter",
                          "scatter into a tensor that does not require grad (scatter is not differentiable; "
                          "ts::dist::functional::broadcast and all_to_all_single are)");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("scatter", output, group, rooted(src));
  // Roots of several fibres often scatter the same bytes (distribute_tensor hands every root a
  // replica of one tensor's pieces): such fibres' results are computed once and shared.
  struct Scattered {
    std::vector<int64_t> identity;  // of the root's blocks: their bytes and layouts
    std::vector<std::shared_ptr<void>>
        owners;  // keep those bytes allocated, so no other tensor gets their address
    std::vector<Tensor> results;
  };
  std::vector<Scattered> scattered;
  const bool reusable = comm::evaluates_plans() && covered.fibres().size() > 1;
  for (const Fibre& members : covered.fibres()) {
    require_root("scatter", src, members.size());
    require_list("scatter", inputs, members.size(), output.ranks(), "the input list");
    const Shape shape = common_shape("scatter", output, covered, members, "the output");
    const int root = members[static_cast<size_t>(src)];
    Scattered fibre;
    bool shared = reusable && covered.hosts(root);  // only shared bytes (replicas) can be another root's too
    if (covered.hosts(root))
      for (size_t i = 0; i < members.size(); ++i) {
        const Tensor block = inputs[i].shards().at(root);
        if (block.sizes() != shape)
          throw Error(fmt::format(
              "scatter: input {} on the root (rank {}) has shape {}, expected the output's shape {}", i, root,
              shape_text(block.sizes()), shape_text(shape)));
        shared = shared && block.impl()->storage()->shared != nullptr;
        if (shared) {
          detail::append_shard_identity(inputs[i], root, fibre.identity);
          fibre.owners.push_back(block.impl()->storage()->shared);
        }
      }
    const auto same = std::find_if(scattered.begin(), scattered.end(),
                                   [&](const Scattered& s) { return s.identity == fibre.identity; });
    const bool repeated = shared && same != scattered.end();
    Tensor unread;  // what the other members pass: the schedule reads only the root's input
    const std::vector<Tensor> buffers = member_inputs(covered, members, [&](int m) {
      if (m != root || repeated) {
        if (!unread.defined()) {
          DisabledLocalMode plain;
          unread = empty({shape_numel(shape) * static_cast<int64_t>(members.size())},
                         TensorOptions(output.dtype()).backend(output.backend()));
        }
        return unread;
      }
      std::vector<Tensor> root_blocks;
      for (size_t i = 0; i < members.size(); ++i) root_blocks.push_back(flat(inputs[i].shards().at(root)));
      return joined(root_blocks);
    });
    std::vector<Tensor> results =
        repeated ? comm::repeat_collective(covered.context, TESSERA_COLL_SCATTER, members, buffers,
                                           shape_numel(shape), TESSERA_REDUCE_SUM, src, same->results)
                 : comm::run_collective(covered.context, TESSERA_COLL_SCATTER, members, buffers,
                                        shape_numel(shape), TESSERA_REDUCE_SUM, src);
    // Kept for later fibres, so what is written back are replicas (write_back takes their bytes).
    if (shared && !repeated) {
      fibre.results = results;
      scattered.push_back(std::move(fibre));
      for (Tensor& result : results)
        if (result.defined()) result = detail::replica_of(result);
    }
    for (size_t i = 0; i < members.size(); ++i)
      if (covered.hosts(members[i])) write_back(output.shards().at(members[i]), results[i]);
  }
}

void gather(std::vector<Tensor>& outputs, const Tensor& tensor, int dst, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(tensor))
    return comm::program::gather(*program, outputs, tensor, dst, group);
  for (const Tensor& output : outputs)
    autograd::check_inplace(output, "dist::gather",
                            "gather into tensors that do not require grad (gather is not differentiable; "
                            "ts::dist::functional::all_gather_tensor is)");
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("gather", tensor, group, rooted(dst));
  for (const Fibre& members : covered.fibres()) {
    require_root("gather", dst, members.size());
    require_list("gather", outputs, members.size(), tensor.ranks(), "the output list");
    const Shape shape = common_shape("gather", tensor, covered, members, "the tensor");
    const std::vector<Tensor> inputs =
        member_inputs(covered, members, [&](int m) { return flat(tensor.shards().at(m)); });
    const int64_t n = shape_numel(shape);
    const std::vector<Tensor> results = comm::run_collective(covered.context, TESSERA_COLL_GATHER, members,
                                                             inputs, n, TESSERA_REDUCE_SUM, dst);
    const int root = members[static_cast<size_t>(dst)];
    if (covered.hosts(root))
      for (size_t i = 0; i < members.size(); ++i)
        write_block(outputs[i].shards().at(root), results[static_cast<size_t>(dst)],
                    static_cast<int64_t>(i) * n, n);
  }
}

void barrier(const Tensor& participants, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(participants)) return comm::program::barrier(*program, group);
  const comm::CollectiveCall call;
  const comm::Call covered = fibres_for("barrier", participants, group, comm::Fingerprint{"none", {}, -1});
  for (const Fibre& members : covered.fibres()) {
    DisabledLocalMode plain;
    const std::vector<Tensor> none =
        member_inputs(covered, members, [&](int) { return empty({0}, TensorOptions(participants.dtype())); });
    comm::run_collective(covered.context, TESSERA_COLL_BARRIER, members, none, 0);
  }
}

void check_messages() { comm::require_no_pending_messages("check_messages"); }

void send(const Tensor& tensor, const SymInt& dst, int tag) {
  if (in_per_rank_region())
    throw Error("send: cannot be issued inside run_per_rank or any per-rank function");
  if (const auto* program = comm::program_for(tensor))
    return program->programs->send(program->rank, static_cast<int>(dst.as_int()), tag,
                                   comm::own_tensor(*program, tensor), "send", comm::MessageSpace::user);
  require_local("send", tensor, "the tensor");
  const int world = comm::world_of(tensor);
  for (const auto& [rank, shard] : tensor.shards()) comm::require_in_world("send", rank, dst.at(rank), world);
  const world::WorldState& w = world::current();
  for (const auto& [rank, shard] : tensor.shards()) {
    const int64_t to = dst.at(rank);
    if (to < 0) continue;
    if (to == rank) throw Error(fmt::format("send: rank {} sends to itself", rank));
    if (w.hosts(static_cast<int>(to))) {
      comm::post(rank, static_cast<int>(to), tag, shard.clone());
      continue;
    }
    comm::post_remote(world::current(), rank, static_cast<int>(to), tag, shard.contiguous().clone());
  }
}

void recv(Tensor& tensor, const SymInt& src, int tag) {
  autograd::check_inplace(tensor, "dist::recv",
                          "receive into a tensor that does not require grad (point-to-point messages are not "
                          "differentiable)");
  if (in_per_rank_region())
    throw Error("recv: cannot be issued inside run_per_rank or any per-rank function");
  if (const auto* program = comm::program_for(tensor))
    return program->programs
        ->irecv(program->rank, static_cast<int>(src.as_int()), tag, comm::own_tensor(*program, tensor),
                "recv", comm::MessageSpace::user)
        ->wait();
  require_local("recv", tensor, "the tensor");
  const world::WorldState& w = world::current();
  for (const auto& [rank, shard] : tensor.shards()) {
    const int64_t from = src.at(rank);
    if (from < 0) continue;
    if (!w.hosts(static_cast<int>(from))) {
      Tensor target = shard;
      target.copy_(comm::take_remote(static_cast<int>(from), rank, tag, shard));
      continue;
    }
    const Tensor message = comm::take(static_cast<int>(from), rank, tag);
    if (message.sizes() != shard.sizes())
      throw Error(fmt::format(
          "recv on rank {} from rank {}: the message has shape {} but the receiving tensor has {}", rank,
          from, shape_text(message.sizes()), shape_text(shard.sizes())));
    // As between processes and in per-rank programs: a message is received as the dtype it was sent.
    if (message.dtype() != shard.dtype())
      throw Error(
          fmt::format("recv on rank {} from rank {}: the message holds {} but the receiving tensor is {}",
                      rank, from, dtype_name(message.dtype()), dtype_name(shard.dtype())));
    Tensor target = shard;
    target.copy_(message);
  }
}

}  // namespace dist
}  // namespace tessera
