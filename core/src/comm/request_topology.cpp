#include "comm/request_topology.hpp"

#include <limits>
#include <type_traits>

namespace tessera::comm {
namespace {

// group_ranks is the members vector itself: no copy per call.
static_assert(std::is_same_v<int, int32_t>, "members (int) are passed as group_ranks (int32_t)");

const RequestTopology& host(const void* topology) { return *static_cast<const RequestTopology*>(topology); }

bool in_group(const RequestTopology& t, int32_t rank) { return rank >= 0 && rank < t.size; }

// Plugins call these through the C ABI: nothing may throw. A rank outside the group reads as
// "not stated" (-1) here and as NaN below, which estimate() then reports naming the plugin.
int32_t locality_of(const void* topology, int32_t rank, int32_t level) {
  const RequestTopology& t = host(topology);
  return in_group(t, rank) ? t.topology->locality(t.members[rank], level) : -1;
}

double transfer_time_of(const void* topology, int32_t from, int32_t to, int64_t bytes) {
  const RequestTopology& t = host(topology);
  if (!in_group(t, from) || !in_group(t, to) || bytes < 0) return std::numeric_limits<double>::quiet_NaN();
  try {
    return t.topology->transfer_time(t.members[from], t.members[to], bytes);
  } catch (...) {  // ranks the topology cannot join (a disconnected custom graph)
    return std::numeric_limits<double>::infinity();
  }
}

}  // namespace

void attach_topology(tessera_collective_request& request, const RequestTopology& t) {
  request.group_ranks = t.members;
  request.topology = &t;
  request.locality = &locality_of;
  request.transfer_time = &transfer_time_of;
}

const RequestTopology* topology_of(const tessera_collective_request& request) {
  // Only a request whose functions are ours carries our object (a plugin cannot make one).
  if (request.topology == nullptr || request.locality != &locality_of) return nullptr;
  return &host(request.topology);
}

}  // namespace tessera::comm
