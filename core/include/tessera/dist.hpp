// Collectives and point-to-point messages on local tensors (PyTorch: torch.distributed).
//
// Every rank of a local tensor is a participant: ts::dist::all_reduce(lt, ts::ReduceOp::SUM)
// reduces over all of lt's ranks, in place. With a group, the collective runs on each fibre of the
// group (see process_group.hpp). Roots (src/dst) are group ranks. Which algorithm computes a
// collective is chosen per call from configuration (see set_algorithms); every algorithm gives
// the direct result up to floating-point reordering and is bitwise reproducible.
//
// Inside a rank's program (tessera/spawn.hpp) the same calls take the rank's own plain tensors, as
// in a torchrun process: the default group is the whole spawned world, and a group is the fibre
// the calling rank belongs to. A rank that calls a collective waits until every member of its
// fibre has called it; then the collective runs once, as it would on a local tensor of the
// members' tensors, and each member's result lands in its own tensor in place. Members that make
// different calls at the same point (another collective, shape, dtype, reduce op or root) all get
// an error naming the ranks and both calls.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/process_group.hpp"
#include "tessera/sym_int.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

namespace detail {
class WorkState;
}

class ReduceOp {
 public:
  enum Kind { SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM };
  ReduceOp(Kind kind) : kind_(kind) {}  // NOLINT: ts::ReduceOp::SUM is a ReduceOp
  static ReduceOp premul_sum(double factor) {
    ReduceOp op(PREMUL_SUM);
    op.factor_ = factor;
    return op;
  }
  Kind kind() const { return kind_; }
  double factor() const { return factor_; }
  std::string to_string() const;

 private:
  Kind kind_;
  double factor_ = 1.0;
};

namespace dist {

void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, const ProcessGroup& group = {});
void broadcast(Tensor& tensor, int src, const ProcessGroup& group = {});
void reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM, const ProcessGroup& group = {});
// outputs[i] (one per group rank, shaped like tensor) receives group rank i's tensor.
void all_gather(std::vector<Tensor>& outputs, const Tensor& tensor, const ProcessGroup& group = {});
// output's dim 0 is the group size times tensor's; blocks in group-rank order.
void all_gather_into_tensor(Tensor& output, const Tensor& input, const ProcessGroup& group = {});
// Group rank i receives op over every member's inputs[i].
void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::SUM,
                    const ProcessGroup& group = {});
// input's dim 0 is split into group-size blocks; group rank i receives op over block i.
void reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM,
                           const ProcessGroup& group = {});
// Member j's outputs[i] = member i's inputs[j].
void all_to_all(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                const ProcessGroup& group = {});
// Splits along dim 0 (empty = equal splits), which may be local ints. What member i sends j must
// equal what j expects from i.
void all_to_all_single(Tensor& output, const Tensor& input, const std::vector<SymInt>& output_splits = {},
                       const std::vector<SymInt>& input_splits = {}, const ProcessGroup& group = {});
// Group rank i receives the root's inputs[i].
void scatter(Tensor& output, const std::vector<Tensor>& inputs, int src, const ProcessGroup& group = {});
// The root's outputs[i] receives group rank i's tensor; other ranks' outputs are unchanged.
void gather(std::vector<Tensor>& outputs, const Tensor& tensor, int dst, const ProcessGroup& group = {});
// No data; orders the ranks (and marks a point in traces).
void barrier(const Tensor& participants, const ProcessGroup& group = {});

// No data; inside a rank's program (ts::spawn) the rank waits until every group member arrives.
void barrier(const ProcessGroup& group = {});

// Point to point, for pipeline parallelism, on local tensors. peer is a global rank per sending
// (receiving) rank, a local int when it differs; -1 means "this rank does not send (receive)".
// Sends are buffered; a recv takes the oldest matching message (same source and tag). A recv with
// no matching send, and a send nobody received by the next collective or check_messages(), are
// errors naming both ranks. Tags other than 0 work between ranks of this process only.
//
// Inside a rank's program (ts::spawn), on its plain tensors: send and isend are eager (they return
// once the message is buffered, so two ranks that both send first proceed); recv waits until a
// matching message arrives; a message whose shape or dtype differs from the receiving tensor's is
// an error on the receiving rank.
void send(const Tensor& tensor, const SymInt& dst, int tag = 0);
void recv(Tensor& tensor, const SymInt& src, int tag = 0);

// A point-to-point operation that may still be in flight (PyTorch: the Work of isend/irecv).
// Default-constructed: completed. Outside a rank's program every operation completes at once.
class Work {
 public:
  Work() = default;
  explicit Work(std::shared_ptr<detail::WorkState> state) : state_(std::move(state)) {}
  bool is_completed() const;
  // Returns once completed (in a rank's program, letting the other ranks run meanwhile); throws
  // what made the operation fail (a message of the wrong shape or dtype).
  void wait();

 private:
  std::shared_ptr<detail::WorkState> state_;
};

// send/recv that return at once; irecv writes into `tensor` once a matching message arrives.
// Receives posted by one rank match messages in the order they were posted.
Work isend(const Tensor& tensor, const SymInt& dst, int tag = 0);
Work irecv(Tensor& tensor, const SymInt& src, int tag = 0);

// One operation of batch_isend_irecv: P2POp(ts::dist::isend, t, peer, tag) or
// P2POp(ts::dist::irecv, t, peer, tag).
class P2POp {
 public:
  using Send = Work (*)(const Tensor&, const SymInt&, int);
  using Recv = Work (*)(Tensor&, const SymInt&, int);
  P2POp(Send op, Tensor tensor, SymInt peer, int tag = 0)
      : send_(op), tensor_(std::move(tensor)), peer_(std::move(peer)), tag_(tag) {}
  P2POp(Recv op, Tensor tensor, SymInt peer, int tag = 0)
      : recv_(op), tensor_(std::move(tensor)), peer_(std::move(peer)), tag_(tag) {}

  bool is_send() const { return send_ != nullptr; }
  const Tensor& tensor() const { return tensor_; }
  const SymInt& peer() const { return peer_; }
  int tag() const { return tag_; }
  Work start() const;  // issues the operation

 private:
  Send send_ = nullptr;
  Recv recv_ = nullptr;
  Tensor tensor_;  // a handle: a receive writes into the caller's tensor
  SymInt peer_;
  int tag_ = 0;
};

// Issues every operation in order and returns their Works, in the same order.
std::vector<Work> batch_isend_irecv(const std::vector<P2POp>& ops);

void check_messages();  // throws if a sent message was never received (and drops them)

// Algorithm selection, e.g. "all_reduce:ring;all_gather[0-64K]:rd;*:direct". Rules are tried in
// order; the first whose collective and message size (bytes per rank, K/M/G suffixes) match and
// whose algorithm accepts the request wins; "direct" always does. Unknown names are errors, and so
// is a rule for one collective naming an algorithm that does not offer it ("all_reduce:bruck"); a
// "*" rule applies to the collectives its algorithm offers.
// The target "auto" ("all_reduce:auto", "*:auto") is tuning by estimate: among every loaded
// algorithm that offers the collective and accepts the request, the one with the lowest estimated
// time for it on the topology in force: the algorithm's own estimate (SDK 1.3) or the cost model's
// of its schedule; equal estimates go to the smaller name. Chosen once per request shape, group and
// topology (logged at info with the estimates); rules before it still win.
void set_algorithms(const std::string& rules);
std::string algorithms();                    // the rules in force (built-in defaults unless configured)
std::vector<std::string> algorithm_names();  // every loaded algorithm
// The algorithm the rules pick for a call over group ranks 0..group_size-1 placed on world ranks
// 0..group_size-1 of the calling thread's world and its topology, moving `bytes` per rank (after
// precondition fallbacks; "auto" estimates a message of that many bytes).
std::string algorithm_for(const std::string& collective, int group_size, int64_t bytes);

// Builds the named algorithm's schedule for a request and verifies it symbolically, as every
// collective call does once per schedule: every chunk is in bounds, every receive matches a send,
// nothing deadlocks, no input is written, and every rank ends with exactly the contributions its
// collective promises. Returns an empty string when valid, else what is wrong (naming the plugin
// and file) — also for a malformed request (a group size outside 1..65536, a negative count, a root
// outside the group) and for a plugin that fails to build. For plugin authors and tests.
// ring_order (group ranks, a permutation) is what ring-shaped algorithms are asked to follow.
// Throws Error only for names it does not know (collective, algorithm) and a ring order that is
// not a permutation.
std::string verify_schedule(const std::string& algorithm, const std::string& collective, int group_size,
                            int64_t count, int root = 0, ReduceOp op = ReduceOp::SUM,
                            const std::vector<int>& ring_order = {});

}  // namespace dist
}  // namespace tessera
