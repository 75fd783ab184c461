// One tessera::dist API call: which fibres of the group this process runs, the world they span,
// and the call's sequence number, after (in a world spread over processes, when checking is on)
// every process has shown that it makes the same call (collective fingerprints, docs/multi-process.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/dist.hpp"
#include "tessera/tensor.hpp"
#include "tessera/topology.hpp"
#include "world/world.hpp"

namespace tessera::comm {

// What a call runs in; passed to run_collective for each fibre.
struct CallContext {
  int world = 0;      // ranks the topology spans (world_of)
  uint64_t call = 0;  // the world's sequence number of this API call: the executor's message tags
  // In a world spread over processes: a digest of what the call is (operation, dtype, shape where
  // every member must share it, reduce op with its factor, root), which every message between
  // processes carries in its envelope (comm/envelope.hpp) and the receiver compares with its own.
  uint64_t fingerprint = 0;
  // The group's own topology (ProcessGroup::topology, e.g. a DeviceMesh's with_topology), which
  // run_collective orders and costs the call on; null: the calling world's.
  std::shared_ptr<const Topology> topology;
};

// What every process must agree on about a call. `shape` is empty when members may differ in
// shape (all_to_all_single); `reduce_op` is empty and `root` -1 when the call has none.
struct Fingerprint {
  std::string shape;
  std::optional<ReduceOp> reduce_op;  // shown as "SUM", "PREMUL_SUM(0.5)", ... (only when compared)
  int32_t root = -1;
};

struct Call {
  // Each fibre in group-rank order, each with a rank hosted here; the world's own list when the
  // call covers the whole world (no list built per call).
  std::shared_ptr<const world::WorldState::FibreList> fibre_list;
  const world::WorldState::FibreList& fibres() const { return *fibre_list; }
  CallContext context;
  const world::WorldState* world = nullptr;  // the calling thread's, looked up once per call

  // Whether this process hosts global rank m (every rank, in a simulated world).
  bool hosts(int m) const { return world->hosts(m); }
};

// Checks the tensor and covers the group (covered_fibres); in a distributed world the fibres are
// the group's fibres that hold a rank this process hosts (the default group: the whole world), and
// the tensor must hold every hosted member. Then compares fingerprints across processes when the
// world checks collectives: a process whose call differs makes every process throw an Error naming
// its first rank and both calls.
Call begin_call(const char* op, const Tensor& tensor, const ProcessGroup& group,
                const Fingerprint& fingerprint);

// Whether the calling thread's world compares fingerprints (the caller can skip building them).
bool checks_calls();

// The shape text of a fingerprint: the hosted shards' common shape, or "uneven".
std::string shape_of(const Tensor& tensor);

}  // namespace tessera::comm
