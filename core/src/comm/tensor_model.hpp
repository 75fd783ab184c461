// The executor's tensors: each hosted group rank's buffers, and the messages between them.
//
// Chunks are addressed as (buffer, offset, count) ranges of 1-d contiguous buffers and handed to
// the backend's kernels as such (dispatch::operand_range): a schedule of many small steps must not
// pay for a tensor view per step.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <memory_resource>
#include <vector>

#include "comm/executor.hpp"
#include "comm/schedule.hpp"
#include "tensor/kernel_operand.hpp"
#include "tensor/tensor_impl.hpp"

namespace tessera::comm {

// A message in flight. It reads the sender's buffer in place, not a copy: the copy is made only if
// the sender overwrites that region before the receiver takes it. Most schedules never do, so
// most bytes move once, as in a zero-copy transport.
struct InFlight {
  std::shared_ptr<TensorImpl> data;  // the sender's buffer, or the message's own copy
  int64_t data_offset;               // where the message starts in `data`
  int32_t buffer;                    // the sender's buffer and range it was captured from
  int64_t offset;
  int64_t count;
  bool delivered = false;
};

// The executor's data model (see schedule_runner.hpp): every hosted group rank's buffers as dense
// 1-d tensors; ranks whose input is undefined live in other processes and have no buffers here.
class TensorModel {
 public:
  struct Payload {
    int64_t count;
    std::shared_ptr<InFlight> message;
  };

  // overwrite_inputs: the caller lets the schedule write into the inputs (an in-place collective
  // whose result goes back into them anyway). When the schedule allows it (Schedule::in_place)
  // and no two ranks' inputs share a Storage, each rank's output is then its input's memory.
  TensorModel(const Schedule& schedule, const std::vector<Tensor>& inputs, bool overwrite_inputs = false);
  TensorModel(const TensorModel&) = delete;  // its lists live in its own arena
  TensorModel& operator=(const TensorModel&) = delete;

  Payload capture(int rank, const tessera_chunk& source);
  void deliver(int rank, const tessera_chunk& destination, Payload& payload, bool reduce);
  void copy(int rank, const tessera_chunk& destination, const tessera_chunk& source);
  void reduce(int rank, const tessera_chunk& destination, const tessera_chunk& source);
  // A received message (from another process, in `landed` from element `landed_offset`) combined
  // into a chunk.
  void deliver_landed(int rank, const tessera_chunk& destination, const TensorImpl& landed, bool reduce,
                      int64_t landed_offset = 0);

  // Every group rank's output buffer; undefined for ranks hosted elsewhere.
  std::vector<Tensor> outputs() const;

  // A chunk as a tensor view (for the transport, which sends and receives tensors).
  Tensor view(int rank, const tessera_chunk& c) const;
  // Buffer `b` of a hosted rank (1-d, dense); a write may replace it (before_write), so fetch it
  // again after one.
  const std::shared_ptr<TensorImpl>& buffer(int rank, int32_t b) const {
    return buffers_[static_cast<size_t>(rank)][static_cast<size_t>(b)];
  }

  // Messages still reading the region about to be written take their own copy first. A send to
  // another process still reading it cannot be copied from under the transport's feet, so the
  // rank's whole buffer is copied instead and the send keeps the old one (see process_runner).
  void before_write(int rank, const tessera_chunk& target);

  // Set by the process runner: whether a send to another process still reads (part of) `target`.
  // A plain function and its context: asked before every write, so no std::function call.
  struct RemoteReading {
    bool (*still_sending)(void* context, int rank, const tessera_chunk& target) = nullptr;
    void* context = nullptr;
  };
  RemoteReading remote_reading_;

 private:
  // destination (op)= source, over `count` elements: a copy or the schedule's reduction.
  void combine(const TensorImpl& destination, int64_t destination_offset, const TensorImpl& source,
               int64_t source_offset, int64_t count, bool reduce) const;
  // A new buffer holding `count` elements of `source` from `offset`.
  std::shared_ptr<TensorImpl> copy_of(const TensorImpl& source, int64_t offset, int64_t count) const;

  int32_t reduce_op_;
  // The lists below take their memory from here (a model lives for one call of a few ranks) and
  // only beyond it from the heap.
  std::array<std::byte, 1024> arena_;
  std::pmr::monotonic_buffer_resource memory_{arena_.data(), arena_.size()};
  std::pmr::vector<std::pmr::vector<std::shared_ptr<TensorImpl>>> buffers_{&memory_};
  std::pmr::vector<std::pmr::vector<std::shared_ptr<InFlight>>> in_flight_{&memory_};
};

}  // namespace tessera::comm
