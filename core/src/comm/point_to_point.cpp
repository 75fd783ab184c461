// Non-blocking point-to-point (isend, irecv, batch_isend_irecv), their Work, and the barrier
// without a tensor. On local tensors every operation completes at once (a simulated world's sends
// are buffered and its receives take what was sent before); in a rank's program (ts::spawn) a
// receive is posted to the scheduler and completes when a matching message arrives.
#include <fmt/format.h>

#include "comm/rank_programs.hpp"
#include "tessera/dist.hpp"
#include "tessera/errors.hpp"

namespace tessera::dist {

bool Work::is_completed() const { return state_ == nullptr || state_->completed(); }

void Work::wait() {
  if (state_ != nullptr) state_->wait();
}

Work isend(const Tensor& tensor, const SymInt& dst, int tag) {
  send(tensor, dst, tag);  // eager: buffered before it returns
  return Work();
}

Work irecv(Tensor& tensor, const SymInt& src, int tag) {
  if (const auto* program = comm::program_for(tensor)) {
    if (tensor.requires_grad())
      throw Error(
          fmt::format("irecv on rank {}: the receiving tensor requires grad; receive into a tensor that does "
                      "not (point-to-point messages are not differentiable)",
                      program->rank));
    return Work(program->programs->irecv(program->rank, static_cast<int>(src.as_int()), tag,
                                         comm::own_tensor(*program, tensor), "irecv",
                                         comm::MessageSpace::user));
  }
  recv(tensor, src, tag);
  return Work();
}

Work P2POp::start() const {
  if (send_ != nullptr) return send_(tensor_, peer_, tag_);
  Tensor target = tensor_;  // the same tensor: the receive writes into the caller's
  return recv_(target, peer_, tag_);
}

std::vector<Work> batch_isend_irecv(const std::vector<P2POp>& ops) {
  std::vector<Work> works;
  works.reserve(ops.size());
  for (const P2POp& op : ops) works.push_back(op.start());
  return works;
}

void barrier(const ProcessGroup& group) {
  if (const world::RunningProgram* program = world::running_program())
    return comm::program::barrier(*program, group);
  throw Error(
      "barrier(): without a tensor a barrier needs a rank's program (ts::spawn) to know its rank; on local "
      "tensors "
      "call barrier(participants, group) with a local tensor over the participating ranks");
}

}  // namespace tessera::dist
