// "probe" (plugin coll-probe): a valid all_reduce (every rank's input folded at rank 0 in rank
// order, then sent back) whose SDK 1.3 estimate records what the request showed it of the topology
// (each group rank's world rank, node domain and transfer time from group rank 0) and answers 0
// seconds, so that the rule "auto" takes it. Built as a plain module whose topology_probe_seen the
// tests read through dlsym: what a plugin algorithm sees, compared with the topology's definition.
#include <cstdint>
#include <mutex>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

constexpr int32_t kMostRanks = 64;
constexpr int64_t kProbeBytes = int64_t{1} << 20;

struct Seen {
  std::mutex mutex;
  int32_t group_size = 0;  // 0: no estimate asked yet
  int32_t world_rank[kMostRanks] = {};
  int32_t node[kMostRanks] = {};
  double transfer_from_0[kMostRanks] = {};
};
Seen seen;

tessera_status check(void*, const tessera_collective_request* request, tessera_error* error) {
  if (request->collective != TESSERA_COLL_ALL_REDUCE)
    return sdk::report(error, TESSERA_UNIMPLEMENTED, "probe only does all_reduce");
  return TESSERA_OK;
}

tessera_status build(void*, const tessera_collective_request* request,
                     const tessera_schedule_builder* builder, tessera_error* error) {
  return sdk::guarded(error, [&] {
    const sdk::Schedule s(builder);
    if (sdk::schedule_trivial(*request, s)) return;
    const tessera_chunk in = sdk::chunk(TESSERA_BUFFER_INPUT, 0, request->count);
    const tessera_chunk out = sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, request->count);
    s.copy(0, out, in);
    for (int32_t r = 1; r < request->group_size; ++r) {
      s.send(r, in, 0);
      s.recv_reduce(0, out, r);
    }
    for (int32_t r = 1; r < request->group_size; ++r) {
      s.send(0, out, r);
      s.recv(r, out, 0);
    }
  });
}

tessera_status estimate(void*, const tessera_collective_request* request, double* seconds,
                        tessera_error* error) {
  return sdk::guarded(error, [&] {
    const std::lock_guard lock(seen.mutex);
    seen.group_size = request->group_size;
    for (int32_t g = 0; g < request->group_size && g < kMostRanks; ++g) {
      seen.world_rank[g] = sdk::world_rank(*request, g);
      seen.node[g] = sdk::locality(*request, g, TESSERA_LOCALITY_NODE);
      seen.transfer_from_0[g] = sdk::transfer_time(*request, 0, g, kProbeBytes);
    }
    *seconds = 0.0;
  });
}

tessera_collective_algorithm make_table() {
  tessera_collective_algorithm table{};
  table.struct_size = sizeof(table);
  table.name = "probe";
  table.collectives = uint64_t{1} << TESSERA_COLL_ALL_REDUCE;
  table.check = &check;
  table.build = &build;
  table.estimate = &estimate;
  return table;
}

const tessera_collective_algorithm table = make_table();

void describe(sdk::PluginBuilder& plugin) {
  plugin.add_component(TESSERA_COMPONENT_COLLECTIVE_ALGORITHM, "probe", &table);
}

}  // namespace

// What the last estimate saw: returns its group size (0 before any) and fills up to `most` entries
// of each array; transfer times are for 1 MiB.
extern "C" __attribute__((visibility("default"))) int32_t topology_probe_seen(int32_t* world_rank,
                                                                              int32_t* node,
                                                                              double* transfer_from_0,
                                                                              int32_t most) {
  const std::lock_guard lock(seen.mutex);
  for (int32_t g = 0; g < seen.group_size && g < most && g < kMostRanks; ++g) {
    world_rank[g] = seen.world_rank[g];
    node[g] = seen.node[g];
    transfer_from_0[g] = seen.transfer_from_0[g];
  }
  return seen.group_size;
}

TESSERA_DEFINE_PLUGIN("coll-probe", "0.1.0",
                      "A test all_reduce whose estimate records the request's topology", describe)
