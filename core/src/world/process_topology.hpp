// The topology of a world spread over processes: the [topology] preset over every rank, with the
// links between processes costed as the transport reports them (SDK 1.5: latency, bandwidth).
#pragma once

#include <string>

#include "tessera/topology.hpp"
#include "world/process_link.hpp"

namespace tessera::world {

// `preset` with every link that joins ranks of different processes (process of rank r: r /
// ranks_per_process) at the transport's latency and bandwidth; a property the transport left
// unknown (0) keeps the preset's value. Pairs the preset does not link stay unlinked (their
// messages take the preset's paths, whose hops between processes cost the transport's), and the
// preset's locality domains stay. `transport` names the topology: "<preset> (<transport> between
// processes)". Returns `preset` itself when the transport reports neither property.
Topology with_process_links(const Topology& preset, int ranks_per_process, const LinkProperties& links,
                            const std::string& transport);

}  // namespace tessera::world
