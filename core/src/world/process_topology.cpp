#include "world/process_topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace tessera::world {

Topology with_process_links(const Topology& preset, int ranks_per_process, const LinkProperties& links,
                            const std::string& transport) {
  if (!links.costs_links() || ranks_per_process <= 0) return preset;
  std::vector<Link> costed = preset.links();
  for (Link& link : costed) {
    if (link.a / ranks_per_process == link.b / ranks_per_process) continue;
    if (links.latency > 0) link.latency = links.latency;
    if (links.bandwidth > 0) link.bandwidth = links.bandwidth;
  }
  Topology topology = Topology::custom(preset.world(), std::move(costed),
                                       fmt::format("{} ({} between processes)", preset.name(), transport));
  // The domains hierarchical algorithms group by are the preset's: only the links' costs changed.
  for (int level = 0; level < Topology::kLocalityLevels; ++level) {
    std::vector<int32_t> ids(static_cast<size_t>(preset.world()));
    for (int r = 0; r < preset.world(); ++r) ids[static_cast<size_t>(r)] = preset.locality(r, level);
    if (std::any_of(ids.begin(), ids.end(), [](int32_t id) { return id >= 0; }))
      topology = topology.with_locality(level, std::move(ids));
  }
  return topology;
}

}  // namespace tessera::world
