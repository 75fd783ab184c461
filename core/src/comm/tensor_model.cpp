#include "comm/tensor_model.hpp"

#include <algorithm>
#include <cstddef>

#include "tensor/internal.hpp"

namespace tessera::comm {

namespace {

// Whether every defined input has a Storage of its own: a rank's output may then be its input's
// memory without writing into another rank's input.
bool distinct_storages(const std::vector<Tensor>& inputs) {
  // The usual few hosted ranks (one per process across processes) compare pairwise: no allocation
  // in a small collective's path.
  constexpr size_t kPairwise = 8;
  if (inputs.size() <= kPairwise) {
    for (size_t i = 0; i < inputs.size(); ++i)
      for (size_t j = i + 1; j < inputs.size(); ++j)
        if (inputs[i].defined() && inputs[j].defined() &&
            inputs[i].impl()->storage() == inputs[j].impl()->storage())
          return false;
    return true;
  }
  std::vector<const Storage*> storages;
  storages.reserve(inputs.size());
  for (const Tensor& input : inputs)
    if (input.defined()) storages.push_back(input.impl()->storage().get());
  std::sort(storages.begin(), storages.end());
  return std::adjacent_find(storages.begin(), storages.end()) == storages.end();
}

}  // namespace

TensorModel::TensorModel(const Schedule& schedule, const std::vector<Tensor>& inputs, bool overwrite_inputs)
    : reduce_op_(schedule.request.reduce_op) {
  const int p = schedule.group_size();
  const bool in_place = overwrite_inputs && schedule.in_place && distinct_storages(inputs);
  buffers_.resize(static_cast<size_t>(p));
  // in_flight_ stays empty until a message is captured: ranks in different processes never capture.
  for (int r = 0; r < p; ++r) {
    const Tensor& input = inputs[static_cast<size_t>(r)];
    if (!input.defined()) continue;  // hosted by another process
    const RankProgram& program = schedule.ranks[static_cast<size_t>(r)];
    std::pmr::vector<std::shared_ptr<TensorImpl>>& buffers = buffers_[static_cast<size_t>(r)];
    buffers.reserve(program.buffer_sizes.size());
    buffers.push_back(input.impl());
    // Bytes shared copy-on-write become this rank's own first: a receive writes them directly.
    if (in_place) input.impl()->prepare_write();
    for (size_t b = 1; b < program.buffer_sizes.size(); ++b)
      buffers.push_back(
          in_place && b == TESSERA_BUFFER_OUTPUT
              ? input.impl()
              : TensorImpl::allocate({program.buffer_sizes[b]}, input.dtype(), input.impl()->backend_ptr()));
  }
}

TensorModel::Payload TensorModel::capture(int rank, const tessera_chunk& source) {
  auto message = std::make_shared<InFlight>(
      InFlight{buffer(rank, source.buffer), source.offset, source.buffer, source.offset, source.count});
  if (in_flight_.empty()) in_flight_.resize(buffers_.size());
  in_flight_[static_cast<size_t>(rank)].push_back(message);
  return {source.count, message};
}

void TensorModel::deliver(int rank, const tessera_chunk& destination, Payload& payload, bool reduce) {
  before_write(rank, destination);
  const InFlight& m = *payload.message;
  combine(*buffer(rank, destination.buffer), destination.offset, *m.data, m.data_offset, destination.count,
          reduce);
  payload.message->delivered = true;
}

void TensorModel::copy(int rank, const tessera_chunk& destination, const tessera_chunk& source) {
  before_write(rank, destination);
  // In place (the output is the input's memory), an identity copy finds its bytes already there.
  if (buffer(rank, destination.buffer) == buffer(rank, source.buffer) && destination.offset == source.offset)
    return;
  combine(*buffer(rank, destination.buffer), destination.offset, *buffer(rank, source.buffer), source.offset,
          destination.count, false);
}

void TensorModel::reduce(int rank, const tessera_chunk& destination, const tessera_chunk& source) {
  before_write(rank, destination);
  combine(*buffer(rank, destination.buffer), destination.offset, *buffer(rank, source.buffer), source.offset,
          destination.count, true);
}

void TensorModel::deliver_landed(int rank, const tessera_chunk& destination, const TensorImpl& landed,
                                 bool reduce, int64_t landed_offset) {
  before_write(rank, destination);
  combine(*buffer(rank, destination.buffer), destination.offset, landed, landed_offset, destination.count,
          reduce);
}

std::vector<Tensor> TensorModel::outputs() const {
  std::vector<Tensor> result;
  result.reserve(buffers_.size());
  for (const auto& buffers : buffers_)
    result.push_back(buffers.empty() ? Tensor() : Tensor(buffers[TESSERA_BUFFER_OUTPUT]));
  return result;
}

Tensor TensorModel::view(int rank, const tessera_chunk& c) const {
  // narrow(0, offset, count) of the 1-d contiguous buffer, made directly: one view per message.
  const TensorImpl& whole = *buffer(rank, c.buffer);
  if (whole.dim() != 1 || c.offset < 0 || c.count <= 0 || c.offset > whole.numel() - c.count)
    return Tensor(buffer(rank, c.buffer)).narrow(0, c.offset, c.count);  // its error names the problem
  const int64_t stride = whole.strides()[0];
  return Tensor(whole.view({c.count}, {stride}, whole.offset() + c.offset * stride, "narrow"));
}

void TensorModel::before_write(int rank, const tessera_chunk& target) {
  if (remote_reading_.still_sending != nullptr &&
      remote_reading_.still_sending(remote_reading_.context, rank, target)) {
    std::shared_ptr<TensorImpl>& whole =
        buffers_[static_cast<size_t>(rank)][static_cast<size_t>(target.buffer)];
    whole = copy_of(*whole, 0, whole->numel());
  }
  if (in_flight_.empty()) return;  // nothing captured
  auto& messages = in_flight_[static_cast<size_t>(rank)];
  std::erase_if(messages, [&](const std::shared_ptr<InFlight>& m) {
    if (m->delivered) return true;
    const bool overlaps = m->buffer == target.buffer && m->offset < target.offset + target.count &&
                          target.offset < m->offset + m->count;
    if (overlaps) {
      m->data = copy_of(*m->data, m->data_offset, m->count);
      m->data_offset = 0;
    }
    return overlaps;
  });
}

void TensorModel::combine(const TensorImpl& destination, int64_t destination_offset, const TensorImpl& source,
                          int64_t source_offset, int64_t count, bool reduce) const {
  if (count == 0) return;
  const int64_t d = destination.offset() + destination_offset, s = source.offset() + source_offset;
  if (destination.storage() == source.storage() && d != s && d < s + count && s < d + count) {
    // Kernels read and write in one pass: a step whose source overlaps its destination (a schedule
    // may shift a buffer within itself) reads from a copy, as if every read came first.
    const std::shared_ptr<TensorImpl> staged = copy_of(source, source_offset, count);
    combine(destination, destination_offset, *staged, 0, count, reduce);
    return;
  }
  if (!reduce) {
    dispatch::copy_range(source, source_offset, destination, destination_offset, count);
    return;
  }
  const int64_t one = 1;
  const dispatch::Operand out = dispatch::operand_range(destination, destination_offset, count, one);
  const dispatch::Operand in = dispatch::operand_range(source, source_offset, count, one);
  dispatch::call_kernel(reduce_kernel(reduce_op_), destination.dtype(), {out, in}, {out});
}

std::shared_ptr<TensorImpl> TensorModel::copy_of(const TensorImpl& source, int64_t offset,
                                                 int64_t count) const {
  auto copy = TensorImpl::allocate({count}, source.dtype(), source.backend_ptr());
  combine(*copy, 0, source, offset, count, false);
  return copy;
}

}  // namespace tessera::comm
