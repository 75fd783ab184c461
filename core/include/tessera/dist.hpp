// Collectives and point-to-point messages on local tensors (PyTorch: torch.distributed).
//
// Every rank of a local tensor is a participant: ts::dist::all_reduce(lt, ts::ReduceOp::SUM)
// reduces over all of lt's ranks, in place. With a group, the collective runs on each fibre of the
// group (see process_group.hpp). Roots (src/dst) are group ranks. Which algorithm computes a
// collective is chosen per call from configuration (see set_algorithms); every algorithm gives
// the direct result up to floating-point reordering and is bitwise reproducible.
#pragma once

#include <string>
#include <vector>

#include "tessera/process_group.hpp"
#include "tessera/sym_int.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

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
void all_to_all(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs, const ProcessGroup& group = {});
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

// Point to point, for pipeline parallelism. peer is a global rank per sending (receiving) rank, a
// local int when it differs; -1 means "this rank does not send (receive)". Sends are buffered;
// a recv takes the oldest matching message. A recv with no matching send, and a send nobody
// received by the next collective or check_messages(), are errors naming both ranks.
void send(const Tensor& tensor, const SymInt& dst);
void recv(Tensor& tensor, const SymInt& src);
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
std::string algorithms();  // the rules in force (built-in defaults unless configured)
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
