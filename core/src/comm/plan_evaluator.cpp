#include "comm/plan_evaluator.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "comm/executor.hpp"
#include "tensor/kernel_operand.hpp"
#include "tessera/local.hpp"

namespace tessera::comm {
namespace {

// `count` copies of `bytes` each, the k-th from `from(k)` to `to(k)`: inlined for the short runs a
// batch of small nodes gathers (a library call per few bytes would cost more than the reduction),
// with the size class chosen once, outside the loop. A run of 9 to 64 bytes is two fixed-size
// copies that overlap in its middle.
template <size_t kBytes, class To, class From>
inline void copy_each(size_t count, To& to, From& from) {
  for (size_t k = 0; k < count; ++k) std::memcpy(to(k), from(k), kBytes);
}
template <size_t kHalf, class To, class From>
inline void copy_each_in_two(size_t count, size_t bytes, To& to, From& from) {
  for (size_t k = 0; k < count; ++k) {
    char* into = to(k);
    const char* source = from(k);
    std::memcpy(into, source, kHalf);
    std::memcpy(into + bytes - kHalf, source + bytes - kHalf, kHalf);
  }
}
template <class To, class From>
inline void copy_runs(size_t count, size_t bytes, To&& to, From&& from) {
  if (bytes == 1) return copy_each<1>(count, to, from);
  if (bytes == 2) return copy_each<2>(count, to, from);
  if (bytes == 4) return copy_each<4>(count, to, from);
  if (bytes == 8) return copy_each<8>(count, to, from);
  if (bytes > 8 && bytes <= 16) return copy_each_in_two<8>(count, bytes, to, from);
  if (bytes > 16 && bytes <= 32) return copy_each_in_two<16>(count, bytes, to, from);
  if (bytes > 32 && bytes <= 64) return copy_each_in_two<32>(count, bytes, to, from);
  for (size_t k = 0; k < count; ++k) std::memcpy(to(k), from(k), bytes);
}

// Outputs of at most this many bytes each are assembled side by side in one buffer when ranks may
// share results (see Evaluation::side_by_side_).
constexpr int64_t kSideBySideOutputBytes = 4096;

// At most this many bytes of operands go into one fold call (a ring over 4096 ranks reducing 16
// floats folds its 4095 waves of 64 bytes in one); longer chains take several calls.
constexpr int64_t kFoldRowsBytes = int64_t{1} << 20;

// One evaluation: the scratch arena and where each value's elements live.
class Evaluation {
 public:
  Evaluation(const SchedulePlan& plan, const std::vector<Tensor>& inputs, bool shared_outputs)
      : plan_(plan),
        inputs_(inputs),
        like_(*inputs.front().impl()),
        dtype_(like_.dtype()),
        item_(static_cast<int64_t>(itemsize(dtype_))),
        // Host memory is copied with memcpy and small nodes are batched; on other memory every step
        // is a kernel call of the backend's.
        host_(like_.backend().device_type() == kDLCPU),
        shared_outputs_(shared_outputs) {
    if (plan.arena_size > 0) arena_ = allocate(plan.arena_size);
    if (host_ && plan.staging_size > 0) staging_ = allocate(plan.staging_size);
    // Assembled outputs first: nodes may live in them. An output that is all of one input, or
    // equal to an earlier output, gets no buffer (assemble_outputs shares those bytes instead).
    const auto p = static_cast<size_t>(plan.group_size);
    buffers_.resize(p);
    whole_inputs_.resize(p);
    side_by_side_at_.assign(p, -1);
    int64_t side_by_side = 0;  // elements of the outputs that get a buffer
    side_by_side_ = host_ && shared_outputs_;
    for (int32_t r = 0; r < plan.group_size; ++r) {
      if (plan.output_class[static_cast<size_t>(r)] != r) continue;
      whole_inputs_[static_cast<size_t>(r)] = whole_input(r);
      if (whole_inputs_[static_cast<size_t>(r)] != nullptr) continue;
      side_by_side_at_[static_cast<size_t>(r)] = side_by_side;
      side_by_side += plan.output_sizes[static_cast<size_t>(r)];
      side_by_side_ =
          side_by_side_ && plan.output_sizes[static_cast<size_t>(r)] * item_ <= kSideBySideOutputBytes;
    }
    if (side_by_side_) {
      if (side_by_side > 0) outputs_ = allocate(side_by_side);
      return;
    }
    for (int32_t r = 0; r < plan.group_size; ++r)
      if (side_by_side_at_[static_cast<size_t>(r)] >= 0)
        buffers_[static_cast<size_t>(r)] = allocate(plan.output_sizes[static_cast<size_t>(r)]);
  }

  void compute_nodes() {
    const char* kernel = reduce_kernel(plan_.reduce_op);
    if (host_) {
      // Host addresses of every base (plan_base), for the batches' gathers and scatters.
      const int32_t p = plan_.group_size;
      bases_.assign(static_cast<size_t>(2 * p + 1), nullptr);
      for (int32_t r = 0; r < p; ++r) {
        const Tensor& input = inputs_[static_cast<size_t>(r)];
        if (input.defined()) bases_[static_cast<size_t>(r)] = address(*input.impl(), 0);
        if (const auto [buffer, at] = output_of(r); buffer != nullptr)
          bases_[static_cast<size_t>(output_base(p, r))] = address(*buffer, at);
      }
      if (arena_ != nullptr) bases_[static_cast<size_t>(arena_base(p))] = address(*arena_, 0);
    }
    // A chain of continued batches folds where the backend has the fold (an optional kernel).
    const char* fold = fold_kernel(plan_.reduce_op);
    if (!host_ || like_.backend().find_kernel(fold, dtype_) == nullptr) fold = nullptr;
    for (size_t b = 0; b < plan_.batches.size(); ++b) {
      const PlanBatch& batch = plan_.batches[b];
      if (batch.count > 1 && host_) {
        if (fold != nullptr && batch.chain_ahead) {
          // The chain's first batch computes it whole; its later links are done by then.
          if (batch.continues == PlanNode::kFresh) compute_chain(kernel, fold, b);
          continue;
        }
        // In plan order, a batch's results stay in the staging buffer for the next batch when that
        // one continues them.
        const bool carried_in = batch.from != PlanBatch::kNone && batch.from + 1 == b;
        compute_batch(kernel, batch, carried_in, batch.continued_by == b + 1);
        continue;
      }
      for (size_t i = batch.first; i < batch.first + batch.count; ++i) {
        const PlanNode& node = plan_.nodes[i];
        const auto [left, left_at] = resolve(node.left_place);
        const auto [right, right_at] = resolve(node.right_place);
        const auto [out, out_at] = resolve(node.out_place(plan_.group_size));
        // In place (left is out) when the node continues a chain: then exactly the executor's call.
        ++counts_.kernel_calls;
        dispatch::call_kernel(kernel, dtype_,
                              {range(*left, left_at, node.length), range(*right, right_at, node.length)},
                              {range(*out, out_at, node.length)});
      }
    }
  }

  const EvaluationCounts& counts() const { return counts_; }

  // Every output with a buffer is filled first (later ones may copy nodes living in earlier ones),
  // then each rank gets its result: a Tensor per rank (replicas sharing bytes where ranks' results
  // are equal), or with shared outputs one entry per distinct result.
  std::vector<Tensor> assemble_outputs() {
    fill_outputs();
    if (shared_outputs_) {
      RankResults results = hand_out_shared();
      std::vector<Tensor> outputs;
      outputs.reserve(results.size());
      for (size_t r = 0; r < results.size(); ++r) outputs.push_back(results[r]);
      return outputs;
    }
    const int32_t p = plan_.group_size;
    std::vector<Tensor> outputs(static_cast<size_t>(p));
    for (int32_t r = 0; r < p; ++r) {
      const int32_t same_as = plan_.output_class[static_cast<size_t>(r)];
      if (same_as != r) {
        // Equal to an output already assembled: a replica sharing its bytes (copy-on-write).
        outputs[static_cast<size_t>(r)] = Tensor(outputs[static_cast<size_t>(same_as)].impl()->replica());
      } else if (const Tensor* input = whole_inputs_[static_cast<size_t>(r)]) {
        // All of one input, unchanged (a broadcast's, a scatter's block of its own): it shares
        // the input's bytes (copy-on-write) instead of copying them.
        outputs[static_cast<size_t>(r)] = Tensor(input->impl()->replica());
      } else {
        outputs[static_cast<size_t>(r)] =
            Tensor(side_by_side_ ? separate(r) : buffers_[static_cast<size_t>(r)]);
      }
    }
    return outputs;
  }

  RankResults assemble_shared() {
    fill_outputs();
    return hand_out_shared();
  }

 private:
  void fill_outputs() {
    const int32_t p = plan_.group_size;
    for (int32_t r = 0; r < p; ++r) {
      const auto [buffer, start] = output_of(r);
      if (buffer == nullptr) continue;
      if (host_) {
        fill_on_host(r, *buffer, start);
        continue;
      }
      int64_t at = start;
      for (const PlanRun& run : plan_.outputs[static_cast<size_t>(r)]) {
        const auto [source, source_at] = resolve(place_of(plan_, run.value, run.offset));
        // Unspecified runs stay as allocated; a node computed in place here is already there.
        if (run.value != kUndefined && !(source == buffer && source_at == at))
          dispatch::copy_range(*source, source_at, *buffer, at, run.length);
        at += run.length;
      }
    }
  }

  // On the host every place has its address (bases_), and the output is prepared for writing once,
  // not once per run: an all_to_all over a thousand ranks copies a million runs of a few bytes.
  void fill_on_host(int32_t r, const TensorImpl& buffer, int64_t start) {
    buffer.prepare_write();
    char* into = address(buffer, start);
    for (const PlanRun& run : plan_.outputs[static_cast<size_t>(r)]) {
      const size_t bytes = static_cast<size_t>(run.length * item_);
      // Unspecified runs stay as allocated; a node computed in place here is already there.
      if (run.value != kUndefined)
        if (const char* from = at(place_of(plan_, run.value, run.offset)); from != into)
          copy_runs(
              1, bytes, [into](size_t) { return into; }, [from](size_t) { return from; });
      into += bytes;
    }
  }

  // Ranks that receive the same result (an all_reduce's, a broadcast's) get one entry; so do ranks
  // whose results the plan computes apart but whose bytes come out equal (an rd all_reduce of MAX
  // compares in a different order on every rank: the plan keeps the orders apart, as MAX does not
  // commute bitwise on NaNs and signed zeros, but most values agree). A result that is all of one
  // input, unchanged (a broadcast's root), is that input's tensor.
  RankResults hand_out_shared() {
    const int32_t p = plan_.group_size;
    RankResults results;
    results.of.resize(static_cast<size_t>(p));
    int32_t last_made = -1;  // the last output given an entry of its own
    for (int32_t r = 0; r < p; ++r) {
      const int32_t same_as = plan_.output_class[static_cast<size_t>(r)];
      int32_t& of = results.of[static_cast<size_t>(r)];
      if (same_as != r) {
        of = results.of[static_cast<size_t>(same_as)];
      } else if (const Tensor* input = whole_inputs_[static_cast<size_t>(r)]) {
        of = static_cast<int32_t>(results.distinct.size());
        results.distinct.push_back(*input);
      } else if (last_made >= 0 && same_bytes(last_made, r)) {
        of = results.of[static_cast<size_t>(last_made)];
      } else {
        last_made = r;
        of = static_cast<int32_t>(results.distinct.size());
        results.distinct.emplace_back(side_by_side_ ? separate(r) : buffers_[static_cast<size_t>(r)]);
      }
    }
    return results;
  }

  // The input that is rank r's whole output, element for element, or nullptr.
  const Tensor* whole_input(int32_t r) const {
    const std::vector<PlanRun>& runs = plan_.outputs[static_cast<size_t>(r)];
    if (runs.size() != 1 || runs[0].value < 0 || runs[0].value >= plan_.group_size || runs[0].offset != 0)
      return nullptr;
    const Tensor& input = inputs_[static_cast<size_t>(runs[0].value)];
    const bool whole = input.defined() && runs[0].length == plan_.output_sizes[static_cast<size_t>(r)] &&
                       input.impl()->numel() == runs[0].length;
    return whole ? &input : nullptr;
  }
  std::shared_ptr<TensorImpl> allocate(int64_t count) const {
    return TensorImpl::allocate({count}, dtype_, like_.backend_ptr());
  }
  // Where rank r's assembled output lives (a buffer of its own, or its place among the outputs side
  // by side), or null: an output that is an input, or another rank's.
  std::pair<const TensorImpl*, int64_t> output_of(int32_t r) const {
    const int64_t at = side_by_side_at_[static_cast<size_t>(r)];
    if (at < 0) return {nullptr, 0};
    return side_by_side_ ? std::pair<const TensorImpl*, int64_t>{outputs_.get(), at}
                         : std::pair<const TensorImpl*, int64_t>{buffers_[static_cast<size_t>(r)].get(), 0};
  }
  // Whether assembled outputs r and s hold the same bytes.
  bool same_bytes(int32_t r, int32_t s) const {
    const int64_t count = plan_.output_sizes[static_cast<size_t>(r)];
    if (!host_ || count != plan_.output_sizes[static_cast<size_t>(s)]) return false;
    if (count == 0) return true;
    const auto [a, a_at] = output_of(r);
    const auto [b, b_at] = output_of(s);
    return std::memcmp(address(*a, a_at), address(*b, b_at), static_cast<size_t>(count * item_)) == 0;
  }
  // Output r, from its place side by side, as a tensor of its own.
  std::shared_ptr<TensorImpl> separate(int32_t r) const {
    const int64_t count = plan_.output_sizes[static_cast<size_t>(r)];
    std::shared_ptr<TensorImpl> own = allocate(count);
    if (const auto [from, at] = output_of(r); count > 0) dispatch::copy_range(*from, at, *own, 0, count);
    return own;
  }
  // The tensor a place's base stands for (plan_base) and the element there.
  std::pair<const TensorImpl*, int64_t> resolve(const PlanPlace& place) const {
    const int32_t p = plan_.group_size;
    if (place.base == kNoBase) return {nullptr, 0};
    if (place.base < p) return {inputs_[static_cast<size_t>(place.base)].impl().get(), place.at};
    if (place.base == arena_base(p)) return {arena_.get(), place.at};
    const auto [buffer, at] = output_of(place.base - p - 1);
    return {buffer, at + place.at};
  }
  dispatch::Operand range(const TensorImpl& t, int64_t offset, const int64_t& count) const {
    return dispatch::operand_range(t, offset, count, one_);
  }
  char* at(const PlanPlace& place) const {
    return bases_[static_cast<size_t>(place.base)] + place.at * item_;
  }
  char* address(const TensorImpl& t, int64_t offset) const {
    return reinterpret_cast<char*>(t.bytes_at(offset));
  }

  // Gathers the batch's left operands and right operands side by side in the staging buffer's two
  // halves, reduces them with one kernel call in place (left op= right, the executor's call) and
  // scatters the results. A batch whose chains are `carried_in` (the results of the batch it
  // continues, kept in the first half) gathers only its other operands; one that `keeps` its
  // results leaves them there, unscattered, for the batch continuing it.
  void compute_batch(const char* kernel, const PlanBatch& batch, bool carried_in, bool keeps) {
    const int64_t total = static_cast<int64_t>(batch.count) * batch.length;
    if (carried_in) {
      gather_other(batch, address(*staging_, total));
    } else {
      gather(batch, &PlanNode::left_place, address(*staging_, 0));
      gather(batch, &PlanNode::right_place, address(*staging_, total));
    }
    const dispatch::Operand result = range(*staging_, 0, total);
    const dispatch::Operand operand = range(*staging_, total, total);
    ++counts_.kernel_calls;
    if (carried_in && batch.continues == PlanNode::kOverRight)
      dispatch::call_kernel(kernel, dtype_, {operand, result}, {result});
    else
      dispatch::call_kernel(kernel, dtype_, {result, operand}, {result});
    if (!keeps) scatter(batch);
  }

  // Batch `start` and every batch of its chain (PlanBatch::continued_by), now, ahead of the
  // batches between the links (the plan allows it: PlanBatch::chain_ahead). The chains stay in the
  // staging buffer from the first batch to the last, whose results alone are scattered; the links
  // fold in calls of up to kFoldRowsBytes of operands, one side each.
  void compute_chain(const char* kernel, const char* fold, size_t start) {
    compute_batch(kernel, plan_.batches[start], false, true);
    const int64_t total = static_cast<int64_t>(plan_.batches[start].count) * plan_.batches[start].length;
    const auto rows_per_call = std::max<int64_t>(1, kFoldRowsBytes / (total * item_));
    size_t last = start;
    for (size_t link = plan_.batches[start].continued_by; link != PlanBatch::kNone;) {
      const uint8_t side = plan_.batches[link].continues;
      links_.clear();
      for (; link != PlanBatch::kNone && plan_.batches[link].continues == side &&
             static_cast<int64_t>(links_.size()) < rows_per_call;
           link = plan_.batches[link].continued_by)
        links_.push_back(link);
      last = links_.back();
      if (links_.size() == 1) {
        compute_batch(kernel, plan_.batches[last], true, true);  // one row: the element-wise call
        continue;
      }
      const auto rows = static_cast<int64_t>(links_.size());
      if (fold_rows_ == nullptr || fold_rows_->numel() < rows * total) fold_rows_ = allocate(rows * total);
      // The links' other operands follow each other in the plan's list: one gather, row after row.
      const size_t bytes = static_cast<size_t>(plan_.batches[last].length * item_);
      const PlanPlace* places = plan_.others.data() + plan_.batches[links_.front()].others;
      char* into = address(*fold_rows_, 0);
      copy_runs(
          links_.size() * plan_.batches[last].count, bytes, [&](size_t k) { return into + k * bytes; },
          [&](size_t k) { return at(places[k]); });
      const int64_t matrix_sizes[2] = {rows, total}, matrix_strides[2] = {total, 1};
      const dispatch::Operand chains = range(*staging_, 0, total);
      const dispatch::Operand matrix = dispatch::operand(*fold_rows_, matrix_sizes, matrix_strides);
      ++counts_.kernel_calls;
      ++counts_.folds;
      dispatch::call_kernel(fold, dtype_, {chains, matrix}, {chains},
                            {dispatch::Attr::integer("acc_side", side == PlanNode::kOverRight ? 1 : 0)});
    }
    scatter(plan_.batches[last]);
  }

  // Copies one operand (`which`: left_place or right_place) of every node of the batch side by side.
  void gather(const PlanBatch& batch, PlanPlace PlanNode::*which, char* into) const {
    const size_t bytes = static_cast<size_t>(batch.length * item_);
    const PlanNode* nodes = plan_.nodes.data() + batch.first;
    copy_runs(
        batch.count, bytes, [&](size_t k) { return into + k * bytes; },
        [&](size_t k) { return at(nodes[k].*which); });
  }
  // The operands a continued batch does not carry over.
  void gather_other(const PlanBatch& batch, char* into) const {
    const size_t bytes = static_cast<size_t>(batch.length * item_);
    const PlanPlace* places = plan_.others.data() + batch.others;
    copy_runs(
        batch.count, bytes, [&](size_t k) { return into + k * bytes; },
        [&](size_t k) { return at(places[k]); });
  }
  // The batch's results, from the staging buffer's first half to their places.
  void scatter(const PlanBatch& batch) const {
    const size_t bytes = static_cast<size_t>(batch.length * item_);
    const PlanNode* nodes = plan_.nodes.data() + batch.first;
    const char* results = address(*staging_, 0);
    copy_runs(
        batch.count, bytes, [&](size_t k) { return at(nodes[k].out_place(plan_.group_size)); },
        [&](size_t k) { return results + k * bytes; });
  }

  const SchedulePlan& plan_;
  const std::vector<Tensor>& inputs_;
  const TensorImpl& like_;
  DType dtype_;
  int64_t item_;
  bool host_;
  bool shared_outputs_;
  // Ranks' results handed out as one tensor when their bytes are equal may be assembled side by side
  // in one buffer first, when every one is small: the distinct ones then get tensors of their own,
  // and results equal to another (every rank's, in an rd all_reduce over thousands of ranks)
  // allocate nothing.
  bool side_by_side_ = false;
  std::shared_ptr<TensorImpl> outputs_;   // side by side: every assembled output
  std::vector<int64_t> side_by_side_at_;  // per rank: where its output starts there; -1: none
  std::shared_ptr<TensorImpl> arena_;
  std::shared_ptr<TensorImpl> staging_;
  std::shared_ptr<TensorImpl> fold_rows_;  // a fold's gathered operands, allocated when first needed
  EvaluationCounts counts_;
  std::vector<size_t> links_;                         // one fold call's batches
  std::vector<std::shared_ptr<TensorImpl>> buffers_;  // otherwise: the assembled outputs, until handed out
  std::vector<const Tensor*> whole_inputs_;           // per output: the input it is all of, or null
  std::vector<char*> bases_;                          // on host memory: where each base starts
  const int64_t one_ = 1;
};

}  // namespace

std::vector<Tensor> evaluate_plan(const SchedulePlan& plan, const std::vector<Tensor>& inputs,
                                  bool shared_outputs, EvaluationCounts* counts) {
  DisabledLocalMode plain_buffers;  // buffers are dense whatever mode the caller is in
  Evaluation evaluation(plan, inputs, shared_outputs);
  evaluation.compute_nodes();
  if (counts != nullptr) *counts = evaluation.counts();
  return evaluation.assemble_outputs();
}

RankResults evaluate_plan_shared(const SchedulePlan& plan, const std::vector<Tensor>& inputs) {
  DisabledLocalMode plain_buffers;
  Evaluation evaluation(plan, inputs, true);
  evaluation.compute_nodes();
  return evaluation.assemble_shared();
}

}  // namespace tessera::comm
