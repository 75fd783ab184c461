// Where a collective's ranks are, as the SDK 1.3 request shows it to algorithms (collective.h:
// group_ranks, topology, locality, transfer_time). The host object lives on the caller's stack for
// the duration of the call; nothing is allocated per call.
#pragma once

#include <cstdint>

#include "tessera/sdk/collective.h"
#include "tessera/topology.hpp"

namespace tessera::comm {

struct RequestTopology {
  const Topology* topology = nullptr;  // over world ranks
  const int* members = nullptr;        // group rank -> world rank; `size` entries
  int32_t size = 0;
};

// Points the request's topology fields at `host`, which must outlive every use of the request.
void attach_topology(tessera_collective_request& request, const RequestTopology& host);
// The host object of a request attach_topology filled; nullptr for a request without one (an
// older host's, or a request made for verification only).
const RequestTopology* topology_of(const tessera_collective_request& request);

}  // namespace tessera::comm
