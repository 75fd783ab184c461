// What the collectives and point-to-point calls of tessera::dist ask of a world whose ranks run
// programs of their own (ts::spawn, implemented in the spawn layer above).
//
// A rank's program calls ts::dist::all_reduce(t) on its own plain tensor, or on a local tensor
// holding its own shard alone (a DTensor's local part in a rank's program). The call becomes a
// Meeting: the member's part (its tensors, what every member must agree on, how to run the
// collective). The programs' scheduler blocks the rank until every member of its fibre has
// arrived, compares the parts, and then runs the collective once through the ordinary machinery:
// each member's tensors become the shards of a local tensor, and the local-tensor collective writes
// every member's result into that member's own tensor.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/dist.hpp"
#include "tessera/process_group.hpp"
#include "tessera/tensor.hpp"
#include "world/world.hpp"

namespace tessera::detail {

// What a dist::Work waits for (tessera/dist.hpp).
class WorkState {
 public:
  virtual ~WorkState() = default;
  virtual bool completed() const = 0;
  // Returns once completed; throws what made it fail.
  virtual void wait() = 0;
};

}  // namespace tessera::detail

namespace tessera::comm {

struct Meeting;

// Which messages a point-to-point call matches: the user's own, or the gradients that the
// differentiable send/recv pair (dist_functional.hpp) passes back in backward. A message of one
// space never matches a receive of the other, so a user's tags cannot collide with gradients'.
enum class MessageSpace { user, gradient };

// Runs a collective once over every member's part, in group-rank order; `group` is the one fibre
// the members form (the default group when it is the whole world).
using MeetingRun = void (*)(const std::vector<Meeting*>& parts, const ProcessGroup& group);

// The local tensors that a run assembled from the members' tensors (by the members' tensor index, the
// first kKept), kept from one collective to the next by the scheduler for the whole world's: a
// program that calls a collective on the same tensors round after round (a training loop's
// gradients, a buffer reduced in place) finds them assembled. Each is taken again only while every
// member passes the very tensor it holds as that member's shard and the calls agree on the same
// numbers (dtype and shape) as when it was made. It keeps those tensors alive until the next
// collective assembles others, or the spawn ends.
struct AssembledMembers {
  static constexpr size_t kKept = 2;
  Tensor locals[kKept];
  boost::container::small_vector<int64_t, 8> agreed[kKept];  // what the calls agreed on when made
};

// One member's arrival at a collective.
struct Meeting {
  const char* collective = "";
  // What every member's call must equal, in numbers (dtypes, shapes, reduce op, root, list
  // lengths): members that differ made different calls at the same point.
  // Inline up to a tensor of 4 dimensions with a reduce op: no allocation per member's arrival.
  boost::container::small_vector<int64_t, 8> agreed;
  // The member's own tensors, in the collective's order (inline up to two: no allocation per arrival).
  // Pointers to the program's own, which outlive the call: the member waits inside it until the
  // collective has run, and no reference count is touched at every arrival.
  boost::container::small_vector<const Tensor*, 2> tensors;
  size_t first_input = 0;                      // all_to_all: where the inputs start among `tensors`
  std::vector<int64_t> splits_out, splits_in;  // all_to_all_single's, this member's
  bool reduces = false;
  ReduceOp op = ReduceOp::SUM;
  int root = -1;
  MeetingRun run = nullptr;
  // The members (global ranks, group-rank order), shared by the members of the default group.
  std::shared_ptr<const std::vector<int>> fibre;
  int group_rank = 0;
  ProcessGroup run_group;  // the group `run` is given
  // What a run defined above comm needs from the member beyond its tensors (the checkpoint layer's
  // state dicts); it lives on the member's stack, which is suspended until the run has ended.
  void* context = nullptr;
  // Set by the scheduler on the part a run reads first (its lead) when it keeps assembled tensors.
  AssembledMembers* assembled = nullptr;

  // The call in words for errors, e.g. "all_reduce(float32 [4], op=SUM)".
  std::string describe() const;
};

// Implemented by the scheduler of a spawned world. Every call comes from the program of the rank
// that the calling thread runs (world::running_program()).
class RankPrograms {
 public:
  // Blocks the rank until every member of part.fibre has arrived, then runs the collective once;
  // throws on every member what the run threw, and a clear error when members' calls differ.
  virtual void meet(Meeting& part) = 0;
  // Buffers a copy of `message` for `dst` (eager: returns at once).
  virtual void send(int src, int dst, int tag, const Tensor& message, const char* op, MessageSpace space) = 0;
  // Posts a receive into `target` from `src` with `tag` in `space`; it takes the oldest matching
  // message.
  virtual std::shared_ptr<detail::WorkState> irecv(int dst, int src, int tag, const Tensor& target,
                                                   const char* op, MessageSpace space) = 0;

 protected:
  ~RankPrograms() = default;
};

// Whether `t` is a local tensor holding rank `rank`'s shard alone: what a DTensor's local part is
// inside that rank's program (ts::spawn), where the rank holds its own shard only.
inline bool holds_only(const Tensor& t, int rank) {
  if (!t.is_local()) return false;
  const RankMap<Tensor>& shards = t.shards();
  return shards.size() == 1 && shards.begin()->first == rank;
}

// The program the calling thread runs, when `t` is one of its own tensors: plain, or local holding
// the running rank's shard alone; null otherwise (another local tensor, or no program runs here).
inline const world::RunningProgram* program_for(const Tensor& t) {
  if (!t.defined()) return nullptr;
  const world::RunningProgram* program = world::running_program();
  if (program == nullptr || (t.is_local() && !holds_only(t, program->rank))) return nullptr;
  return program;
}

// A tensor of the running rank's program as its collectives and messages take it: a plain tensor as
// it is; a local tensor holding only this rank's shard as that shard, the very tensor, so that what
// a collective or a receive writes lands in the local tensor (the Meeting's run assembles the
// members' shards into one local tensor again). Anything else is returned as it is, for the
// caller's checks to name.
inline Tensor own_tensor(const world::RunningProgram& program, const Tensor& t) {
  return t.defined() && holds_only(t, program.rank) ? t.shards().begin()->second : t;
}

// The collectives of tessera::dist as a rank's program issues them (program_collectives.cpp).
namespace program {
void all_reduce(const world::RunningProgram& p, Tensor& tensor, ReduceOp op, const ProcessGroup& group);
void broadcast(const world::RunningProgram& p, Tensor& tensor, int src, const ProcessGroup& group);
void reduce(const world::RunningProgram& p, Tensor& tensor, int dst, ReduceOp op, const ProcessGroup& group);
void all_gather(const world::RunningProgram& p, std::vector<Tensor>& outputs, const Tensor& tensor,
                const ProcessGroup& group);
void all_gather_into_tensor(const world::RunningProgram& p, Tensor& output, const Tensor& input,
                            const ProcessGroup& group);
void reduce_scatter(const world::RunningProgram& p, Tensor& output, const std::vector<Tensor>& inputs,
                    ReduceOp op, const ProcessGroup& group);
void reduce_scatter_tensor(const world::RunningProgram& p, Tensor& output, const Tensor& input, ReduceOp op,
                           const ProcessGroup& group);
void all_to_all(const world::RunningProgram& p, std::vector<Tensor>& outputs,
                const std::vector<Tensor>& inputs, const ProcessGroup& group);
void all_to_all_single(const world::RunningProgram& p, Tensor& output, const Tensor& input,
                       const std::vector<SymInt>& output_splits, const std::vector<SymInt>& input_splits,
                       const ProcessGroup& group);
void scatter(const world::RunningProgram& p, Tensor& output, const std::vector<Tensor>& inputs, int src,
             const ProcessGroup& group);
void gather(const world::RunningProgram& p, std::vector<Tensor>& outputs, const Tensor& tensor, int dst,
            const ProcessGroup& group);
void barrier(const world::RunningProgram& p, const ProcessGroup& group);
}  // namespace program

}  // namespace tessera::comm
