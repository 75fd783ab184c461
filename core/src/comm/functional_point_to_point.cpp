// tessera::dist::functional::send/recv: point-to-point in a rank's program whose gradients flow
// back from the receiver's graph into the sender's. Forward messages are the user's (matched by
// source and tag as dist::send/recv are); gradient messages go the other way in their own space.
#include <fmt/format.h>

#include "autograd/record.hpp"
#include "comm/rank_programs.hpp"
#include "tessera/dist_functional.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"

namespace tessera::dist::functional {
namespace {

const world::RunningProgram& program_or_throw(const char* op, const Tensor& t) {
  if (!t.defined()) throw Error(fmt::format("{}: the tensor is undefined; pass a tensor", op));
  const world::RunningProgram* program = comm::program_for(t);
  if (program == nullptr)
    throw Error(
        fmt::format("{}: works only inside a rank's program (ts::spawn) on the rank's own tensors (plain, "
                    "or local holding its own shard alone), but it was called {}",
                    op,
                    t.is_local() && world::running_program() != nullptr
                        ? fmt::format("on a local tensor over ranks {}", t.ranks().to_string())
                    : t.is_local() ? std::string("on a local tensor outside ts::spawn")
                                   : std::string("outside ts::spawn")));
  return *program;
}

// The backward of a send or recv runs in the rank that recorded it, while its spawn runs: the
// program it reaches is the one the forward used.
const world::RunningProgram& same_program(const char* op, comm::RankPrograms* programs, int rank) {
  const world::RunningProgram* now = world::running_program();
  if (now == nullptr || now->programs != programs || now->rank != rank)
    throw Error(
        fmt::format("{}: the backward must run in rank {}'s program of the ts::spawn that ran the forward, "
                    "but it runs {}",
                    op, rank,
                    now == nullptr ? std::string("outside ts::spawn")
                                   : fmt::format("in rank {}'s program{}", now->rank,
                                                 now->programs != programs ? " of another spawn" : "")));
  return *now;
}

}  // namespace

Tensor send(const Tensor& t, int dst, int tag) {
  const world::RunningProgram& program = program_or_throw("functional::send", t);
  comm::RankPrograms* programs = program.programs;
  const int rank = program.rank;
  const Tensor message = comm::own_tensor(program, t);
  programs->send(rank, dst, tag, message, "functional::send", comm::MessageSpace::user);
  Tensor token = zeros(SymShape());
  if (!autograd::any_requires_grad(t)) return token;
  const Shape& shape = message.sizes();
  const DType dtype = t.dtype();
  // A local tensor's gradient is a local tensor over its ranks: the received one as this rank's shard.
  const bool local = t.is_local();
  autograd::record("SendBackward", {t}, {token}, [=](std::vector<Tensor>&) -> std::vector<Tensor> {
    const world::RunningProgram& p = same_program("functional::send's backward", programs, rank);
    Tensor grad = zeros(SymShape(shape), TensorOptions(dtype));
    p.programs->irecv(rank, dst, tag, grad, "functional::send's backward", comm::MessageSpace::gradient)
        ->wait();
    if (local) return {local_tensor(RankMap<Tensor>({{rank, grad}}))};
    return {grad};
  });
  return token;
}

Tensor recv(const Tensor& like, int src, int tag) {
  const world::RunningProgram& program = program_or_throw("functional::recv", like);
  comm::RankPrograms* programs = program.programs;
  const int rank = program.rank;
  Tensor out = zeros(SymShape(like.sizes()), TensorOptions(like.dtype()));
  programs->irecv(rank, src, tag, out, "functional::recv", comm::MessageSpace::user)->wait();
  if (!is_grad_enabled()) return out;
  if (!is_floating(like.dtype()))
    throw Error(
        fmt::format("functional::recv on rank {}: only floating-point tensors can carry gradients, but "
                    "`like` is {}; use dist::recv, or receive under a NoGradGuard",
                    rank, dtype_name(like.dtype())));
  const DType dtype = like.dtype();
  autograd::record_node(
      "RecvBackward", std::span<const Tensor>(), std::span<const Tensor>(&out, 1),
      [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
        const world::RunningProgram& p = same_program("functional::recv's backward", programs, rank);
        // A rank's ops mixing this plain tensor with its DTensors' local parts give it a local
        // gradient holding the rank's shard alone: the shard is the gradient.
        const Tensor own = comm::own_tensor(p, grads[0]);
        Tensor grad = own.dtype() == dtype ? own : own.to(dtype);
        p.programs->send(rank, src, tag, grad, "functional::recv's backward", comm::MessageSpace::gradient);
        return {};
      });
  return out;
}

}  // namespace tessera::dist::functional
