#include "comm/plan_evaluator.hpp"

#include <cstring>
#include <utility>

#include "comm/executor.hpp"
#include "dispatch/kernel_call.hpp"
#include "tessera/local.hpp"

namespace tessera::comm {
namespace {

// memcpy of `bytes`, inlined for the one- and few-element runs a batch of small nodes gathers
// (a library call per 4 bytes would cost more than the reduction).
inline void copy_bytes(char* to, const char* from, size_t bytes) {
  switch (bytes) {
    case 1: std::memcpy(to, from, 1); return;
    case 4: std::memcpy(to, from, 4); return;
    case 8: std::memcpy(to, from, 8); return;
    default: std::memcpy(to, from, bytes);
  }
}

// One evaluation: the scratch arena and where each value's elements live.
class Evaluation {
 public:
  Evaluation(const SchedulePlan& plan, const std::vector<Tensor>& inputs)
      : plan_(plan), inputs_(inputs), like_(*inputs.front().impl()), dtype_(like_.dtype()),
        item_(static_cast<int64_t>(itemsize(dtype_))),
        // Host memory is copied with memcpy and small nodes are batched; on other memory every step
        // is a kernel call of the backend's.
        host_(like_.backend().device_type() == kDLCPU) {
    if (plan.arena_size > 0) arena_ = allocate(plan.arena_size);
    if (host_ && plan.staging_size > 0) staging_ = allocate(plan.staging_size);
    // Assembled outputs first: nodes may live in them. An output that is all of one input, or
    // equal to an earlier output, gets no buffer (assemble_outputs shares those bytes instead).
    buffers_.resize(static_cast<size_t>(plan.group_size));
    whole_inputs_.resize(static_cast<size_t>(plan.group_size));
    for (int32_t r = 0; r < plan.group_size; ++r) {
      if (plan.output_class[static_cast<size_t>(r)] != r) continue;
      whole_inputs_[static_cast<size_t>(r)] = whole_input(r);
      if (whole_inputs_[static_cast<size_t>(r)] == nullptr)
        buffers_[static_cast<size_t>(r)] = allocate(plan.output_sizes[static_cast<size_t>(r)]);
    }
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
        if (buffers_[static_cast<size_t>(r)] != nullptr)
          bases_[static_cast<size_t>(output_base(p, r))] = address(*buffers_[static_cast<size_t>(r)], 0);
      }
      if (arena_ != nullptr) bases_[static_cast<size_t>(arena_base(p))] = address(*arena_, 0);
    }
    for (const PlanBatch& batch : plan_.batches) {
      if (batch.count > 1 && host_) {
        compute_batch(kernel, batch);
        continue;
      }
      for (size_t i = batch.first; i < batch.first + batch.count; ++i) {
        const PlanNode& node = plan_.nodes[i];
        const auto [left, left_at] = resolve(node.left_place);
        const auto [right, right_at] = resolve(node.right_place);
        const auto [out, out_at] = resolve(node.out_place);
        // In place (left is out) when the node continues a chain: then exactly the executor's call.
        dispatch::call_kernel(kernel, dtype_, {range(*left, left_at, node.length), range(*right, right_at, node.length)},
                              {range(*out, out_at, node.length)});
      }
    }
  }

  std::vector<Tensor> assemble_outputs(bool shared_outputs) {
    const int32_t p = plan_.group_size;
    std::vector<Tensor> outputs(static_cast<size_t>(p));
    for (int32_t r = 0; r < p; ++r) {
      const int32_t same_as = plan_.output_class[static_cast<size_t>(r)];
      std::shared_ptr<TensorImpl> buffer;
      if (same_as != r) {
        // Equal to an output already assembled: that one, or a replica sharing its bytes
        // (copy-on-write), so ranks that receive the same result hold it once (a broadcast's, an
        // all_reduce's).
        const Tensor& same = outputs[static_cast<size_t>(same_as)];
        buffer = shared_outputs ? same.impl() : same.impl()->replica();
      } else if (const Tensor* input = whole_inputs_[static_cast<size_t>(r)]) {
        // All of one input, unchanged (a broadcast's, a scatter's block of its own): it shares
        // the input's bytes (copy-on-write) instead of copying them.
        buffer = shared_outputs ? input->impl() : input->impl()->replica();
      } else {
        buffer = buffers_[static_cast<size_t>(r)];  // kept: later outputs may copy nodes living here
        int64_t at = 0;
        for (const PlanRun& run : plan_.outputs[static_cast<size_t>(r)]) {
          const auto [source, source_at] = resolve(place_of(plan_, run.value, run.offset));
          // Unspecified runs stay as allocated; a node computed in place here is already there.
          if (run.value != kUndefined && !(source == buffer.get() && source_at == at))
            copy(*source, source_at, *buffer, at, run.length);
          at += run.length;
        }
      }
      outputs[static_cast<size_t>(r)] = Tensor(std::move(buffer));
    }
    return outputs;
  }

 private:
  // The input that is rank r's whole output, element for element, or nullptr.
  const Tensor* whole_input(int32_t r) const {
    const std::vector<PlanRun>& runs = plan_.outputs[static_cast<size_t>(r)];
    if (runs.size() != 1 || runs[0].value < 0 || runs[0].value >= plan_.group_size || runs[0].offset != 0) return nullptr;
    const Tensor& input = inputs_[static_cast<size_t>(runs[0].value)];
    const bool whole = input.defined() && runs[0].length == plan_.output_sizes[static_cast<size_t>(r)] &&
                       input.impl()->numel() == runs[0].length;
    return whole ? &input : nullptr;
  }
  std::shared_ptr<TensorImpl> allocate(int64_t count) const {
    return TensorImpl::allocate({count}, dtype_, like_.backend_ptr());
  }
  // The tensor a place's base stands for (plan_base) and the element there.
  std::pair<const TensorImpl*, int64_t> resolve(const PlanPlace& place) const {
    const int32_t p = plan_.group_size;
    if (place.base == kNoBase) return {nullptr, 0};
    if (place.base < p) return {inputs_[static_cast<size_t>(place.base)].impl().get(), place.at};
    if (place.base == arena_base(p)) return {arena_.get(), place.at};
    return {buffers_[static_cast<size_t>(place.base - p - 1)].get(), place.at};
  }
  dispatch::Operand range(const TensorImpl& t, int64_t offset, const int64_t& count) const {
    return dispatch::operand_range(t, offset, count, one_);
  }
  char* at(const PlanPlace& place) const { return bases_[static_cast<size_t>(place.base)] + place.at * item_; }
  char* address(const TensorImpl& t, int64_t offset) const {
    return static_cast<char*>(t.storage()->data) + (t.offset() + offset) * item_;
  }
  void copy(const TensorImpl& from, int64_t from_at, const TensorImpl& to, int64_t to_at, const int64_t& count) const {
    if (count == 0) return;
    if (host_)
      std::memcpy(address(to, to_at), address(from, from_at), static_cast<size_t>(count * item_));
    else
      dispatch::call_kernel("copy", dtype_, {range(from, from_at, count)}, {range(to, to_at, count)});
  }

  // Gathers the batch's left operands and right operands side by side, reduces them with one
  // in-place kernel call (left op= right, the executor's call) and scatters the results.
  void compute_batch(const char* kernel, const PlanBatch& batch) {
    const int64_t length = batch.length;
    const int64_t total = static_cast<int64_t>(batch.count) * length;
    const size_t bytes = static_cast<size_t>(length * item_);
    char* left = address(*staging_, 0);
    char* right = address(*staging_, total);
    const PlanNode* nodes = plan_.nodes.data() + batch.first;
    for (size_t k = 0; k < batch.count; ++k) {
      copy_bytes(left + k * bytes, at(nodes[k].left_place), bytes);
      copy_bytes(right + k * bytes, at(nodes[k].right_place), bytes);
    }
    const dispatch::Operand lefts = range(*staging_, 0, total);
    dispatch::call_kernel(kernel, dtype_, {lefts, range(*staging_, total, total)}, {lefts});
    for (size_t k = 0; k < batch.count; ++k) copy_bytes(at(nodes[k].out_place), left + k * bytes, bytes);
  }

  const SchedulePlan& plan_;
  const std::vector<Tensor>& inputs_;
  const TensorImpl& like_;
  DType dtype_;
  int64_t item_;
  bool host_;
  std::shared_ptr<TensorImpl> arena_;
  std::shared_ptr<TensorImpl> staging_;
  std::vector<std::shared_ptr<TensorImpl>> buffers_;  // the assembled outputs, until handed out
  std::vector<const Tensor*> whole_inputs_;           // per output: the input it is all of, or null
  std::vector<char*> bases_;                          // on host memory: where each base starts
  const int64_t one_ = 1;
};

}  // namespace

std::vector<Tensor> evaluate_plan(const SchedulePlan& plan, const std::vector<Tensor>& inputs, bool shared_outputs) {
  DisabledLocalMode plain_buffers;  // buffers are dense whatever mode the caller is in
  Evaluation evaluation(plan, inputs);
  evaluation.compute_nodes();
  return evaluation.assemble_outputs(shared_outputs);
}

}  // namespace tessera::comm
