// The executor's tensors: each hosted group rank's buffers, and the messages between them.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "comm/executor.hpp"
#include "comm/schedule.hpp"
#include "dispatch/kernel_call.hpp"
#include "tessera/factories.hpp"

namespace tessera::comm {

// A message in flight. It is a view of the sender's buffer, not a copy: the copy is made only if
// the sender overwrites that region before the receiver takes it. Most schedules never do, so
// most bytes move once, as in a zero-copy transport.
struct InFlight {
  Tensor data;
  int32_t buffer;
  int64_t offset;
  int64_t count;
  bool delivered = false;
};

// The executor's data model (see schedule_runner.hpp): every hosted group rank's buffers as dense
// tensors; ranks whose input is undefined live in other processes and have no buffers here.
class TensorModel {
 public:
  struct Payload {
    int64_t count;
    std::shared_ptr<InFlight> message;
  };

  TensorModel(const Schedule& schedule, const std::vector<Tensor>& inputs) : reduce_op_(schedule.request.reduce_op) {
    const int p = schedule.group_size();
    buffers_.resize(static_cast<size_t>(p));
    in_flight_.resize(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) {
      if (!inputs[static_cast<size_t>(r)].defined()) continue;  // hosted by another process
      const RankProgram& program = schedule.ranks[static_cast<size_t>(r)];
      std::vector<Tensor>& buffers = buffers_[static_cast<size_t>(r)];
      buffers.push_back(inputs[static_cast<size_t>(r)]);
      for (size_t b = 1; b < program.buffer_sizes.size(); ++b)
        buffers.push_back(empty({program.buffer_sizes[b]}, TensorOptions(inputs[static_cast<size_t>(r)].dtype())
                                                               .backend(inputs[static_cast<size_t>(r)].backend())));
    }
  }

  Payload capture(int rank, const tessera_chunk& source) {
    auto message = std::make_shared<InFlight>(InFlight{view(rank, source), source.buffer, source.offset, source.count});
    in_flight_[static_cast<size_t>(rank)].push_back(message);
    return {source.count, message};
  }

  void deliver(int rank, const tessera_chunk& destination, Payload& payload, bool reduce) {
    before_write(rank, destination);
    combine(view(rank, destination), payload.message->data, reduce);
    payload.message->delivered = true;
  }

  void copy(int rank, const tessera_chunk& destination, const tessera_chunk& source) {
    before_write(rank, destination);
    combine(view(rank, destination), view(rank, source), false);
  }

  void reduce(int rank, const tessera_chunk& destination, const tessera_chunk& source) {
    before_write(rank, destination);
    combine(view(rank, destination), view(rank, source), true);
  }

  // Every group rank's output buffer; undefined for ranks hosted elsewhere.
  std::vector<Tensor> outputs() const {
    std::vector<Tensor> result;
    for (const auto& buffers : buffers_) result.push_back(buffers.empty() ? Tensor() : buffers[TESSERA_BUFFER_OUTPUT]);
    return result;
  }

  Tensor view(int rank, const tessera_chunk& c) const {
    return buffers_[static_cast<size_t>(rank)][static_cast<size_t>(c.buffer)].narrow(0, c.offset, c.count);
  }

  // A received message (from another process) combined into a chunk.
  void deliver_landed(int rank, const tessera_chunk& destination, const Tensor& landed, bool reduce) {
    before_write(rank, destination);
    combine(view(rank, destination), landed, reduce);
  }

  // Messages still reading the region about to be written take their own copy first. A send to
  // another process still reading it cannot be copied from under the transport's feet, so the
  // rank's whole buffer is copied instead and the send keeps the old one (see process_runner).
  void before_write(int rank, const tessera_chunk& target) {
    if (remote_reading_ && remote_reading_(rank, target)) {
      Tensor& buffer = buffers_[static_cast<size_t>(rank)][static_cast<size_t>(target.buffer)];
      buffer = buffer.clone();
    }
    auto& messages = in_flight_[static_cast<size_t>(rank)];
    std::erase_if(messages, [&](const std::shared_ptr<InFlight>& m) {
      if (m->delivered) return true;
      const bool overlaps = m->buffer == target.buffer && m->offset < target.offset + target.count &&
                            target.offset < m->offset + m->count;
      if (overlaps) m->data = m->data.clone();
      return overlaps;
    });
  }

  // Set by the process runner: whether a send to another process still reads (part of) `target`.
  std::function<bool(int rank, const tessera_chunk& target)> remote_reading_;

  void combine(const Tensor& destination, const Tensor& source, bool reduce) const {
    if (destination.numel() == 0) return;
    if (!reduce) {
      Tensor target = destination;
      target.copy_(source);
      return;
    }
    const TensorImpl& dst = *destination.impl();
    dispatch::call_kernel(reduce_kernel(reduce_op_), dst.dtype(), {dispatch::operand(dst), dispatch::operand(*source.impl())},
                          {dispatch::operand(dst)});
  }

 private:
  int32_t reduce_op_;
  std::vector<std::vector<Tensor>> buffers_;
  std::vector<std::vector<std::shared_ptr<InFlight>>> in_flight_;
};

}  // namespace tessera::comm
