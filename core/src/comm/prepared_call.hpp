// Persistent collectives across processes: what a schedule's run needs that does not change from
// one call to the next (where each member lives, what every envelope of the call says, each
// message's ordinal between its pair of ranks), prepared on a signature's first call and replayed
// by every later call with the same signature, as MPI's persistent collectives (MPI_Allreduce_init)
// prepare once and start many times.
//
// The signature is the schedule (the schedule cache keys it by algorithm, collective, group size,
// count, dtype, reduce op, root, ring order, members and topology), the members' global ranks and
// the call's fingerprint (operation, group, shape, reduce op with its factor, root). Only a call's
// sequence number changes between replays: it goes into every envelope and tag as before, so every
// message is still checked against its call where it arrives, and processes that disagree on a
// call fail exactly as without replay.
//
// The preparations live in the world (one table per world, never shared across worlds), which
// counts how many calls prepared one and how many replayed one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/envelope.hpp"
#include "comm/schedule.hpp"

namespace tessera::world {
class WorldState;
}

namespace tessera::comm {

struct PreparedCall {
  // Where a group rank lives: its process, its position among that process's ranks, and whether
  // it is this process's.
  struct Member {
    int process = 0;
    int position = 0;
    bool hosted = false;
  };
  std::vector<Member> members;  // by group rank
  // The fields every envelope of a call shares; `call` is filled per call.
  Envelope envelope;
  // ordinals[g][i]: for step i of hosted group rank g that sends to or receives from a rank of
  // another process, the how-many-th message between the pair within the call (else 0).
  std::vector<std::vector<uint32_t>> ordinals;
};

struct PreparedCounts {
  uint64_t prepared = 0;  // calls that prepared anew (a signature's first, or one not kept)
  uint64_t replayed = 0;  // calls that replayed an earlier call's preparation
};

// The preparation for running `schedule` with `members` (global ranks by group rank) in `world`
// (spread over processes), for a call whose fingerprint (CallContext::fingerprint) is
// `fingerprint`: an earlier call's with the same signature, else a new one, which is kept for
// later calls when `owner` (the schedule cache's pointer to `schedule`) is given.
std::shared_ptr<const PreparedCall> prepared_call(world::WorldState& world,
                                                  const std::shared_ptr<const Schedule>* owner,
                                                  const Schedule& schedule, const std::vector<int>& members,
                                                  uint64_t fingerprint);

// The world's counts since it was made.
PreparedCounts prepared_counts(world::WorldState& world);

}  // namespace tessera::comm
