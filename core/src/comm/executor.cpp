#include "comm/executor.hpp"

#include <memory>

#include "comm/schedule_runner.hpp"
#include "dispatch/kernel_call.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"

namespace tessera::comm {
namespace {

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

  std::vector<Tensor> outputs() const {
    std::vector<Tensor> result;
    for (const auto& buffers : buffers_) result.push_back(buffers[TESSERA_BUFFER_OUTPUT]);
    return result;
  }

 private:
  Tensor view(int rank, const tessera_chunk& c) const {
    return buffers_[static_cast<size_t>(rank)][static_cast<size_t>(c.buffer)].narrow(0, c.offset, c.count);
  }

  // Messages still reading the region about to be written take their own copy first.
  void before_write(int rank, const tessera_chunk& target) {
    auto& messages = in_flight_[static_cast<size_t>(rank)];
    std::erase_if(messages, [&](const std::shared_ptr<InFlight>& m) {
      if (m->delivered) return true;
      const bool overlaps = m->buffer == target.buffer && m->offset < target.offset + target.count &&
                            target.offset < m->offset + m->count;
      if (overlaps) m->data = m->data.clone();
      return overlaps;
    });
  }

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

  int32_t reduce_op_;
  std::vector<std::vector<Tensor>> buffers_;
  std::vector<std::vector<std::shared_ptr<InFlight>>> in_flight_;
};

}  // namespace

const char* reduce_kernel(int32_t reduce_op) {
  switch (reduce_op) {
    case TESSERA_REDUCE_SUM: return "add";
    case TESSERA_REDUCE_PRODUCT: return "mul";
    case TESSERA_REDUCE_MIN: return "minimum";
    case TESSERA_REDUCE_MAX: return "maximum";
    case TESSERA_REDUCE_BAND: return "bitwise_and";
    case TESSERA_REDUCE_BOR: return "bitwise_or";
    case TESSERA_REDUCE_BXOR: return "bitwise_xor";
    default: return "unknown_reduce_op";
  }
}

std::vector<Tensor> execute(const Schedule& schedule, const std::vector<Tensor>& inputs) {
  DisabledLocalMode plain_buffers;  // buffers are dense whatever mode the caller is in
  TensorModel model(schedule, inputs);
  run_schedule(schedule, model);
  return model.outputs();
}

}  // namespace tessera::comm
