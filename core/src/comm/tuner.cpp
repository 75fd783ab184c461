#include "comm/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "comm/request_topology.hpp"
#include "plugin/guarded_call.hpp"
#include "plugin/validation.hpp"
#include "tessera/topology.hpp"

namespace tessera::comm {
namespace {

// The size at which a path's bandwidth is read off its transfer time (latency + bytes / bandwidth):
// large enough that the latency does not drown it in rounding.
constexpr int64_t kBandwidthProbeBytes = int64_t{1} << 30;

void summarise_nodes(const Topology& topology, const RequestTopology& where, tessera_tuner_request& asked) {
  std::map<int32_t, int32_t> ranks_on;  // node id -> group ranks on it
  for (int32_t i = 0; i < where.size; ++i) {
    const int32_t node = topology.locality(where.members[i], Topology::kLocalityNode);
    if (node < 0) return;  // the topology does not state nodes: both stay 0
    ++ranks_on[node];
  }
  asked.num_nodes = static_cast<int32_t>(ranks_on.size());
  for (const auto& [node, ranks] : ranks_on)
    asked.max_ranks_per_node = std::max(asked.max_ranks_per_node, ranks);
}

// From group rank 0, whose shortest-path tree one source needs: O(p) lookups, not O(p^2).
void summarise_slowest_path(const Topology& topology, const RequestTopology& where,
                            tessera_tuner_request& asked) {
  double slowest = -1;
  for (int32_t i = 1; i < where.size; ++i) {
    const double latency = topology.transfer_time(where.members[0], where.members[i], 0);
    const double probe = topology.transfer_time(where.members[0], where.members[i], kBandwidthProbeBytes);
    const double per_byte = std::max(0.0, probe - latency) / static_cast<double>(kBandwidthProbeBytes);
    const double seconds = latency + per_byte * static_cast<double>(asked.bytes);
    if (seconds <= slowest) continue;
    slowest = seconds;
    asked.slowest_latency = latency;
    asked.slowest_bandwidth = per_byte > 0 ? 1.0 / per_byte : 0.0;
  }
}

}  // namespace

tessera_tuner_request tuner_request(const tessera_collective_request& request, int64_t bytes) {
  tessera_tuner_request asked{};
  asked.struct_size = sizeof(asked);
  asked.collective = request.collective;
  asked.group_size = request.group_size;
  asked.bytes = bytes;
  asked.collective_request = &request;
  const RequestTopology* where = topology_of(request);
  if (where == nullptr || where->topology == nullptr || where->size < 1) return asked;
  summarise_nodes(*where->topology, *where, asked);
  summarise_slowest_path(*where->topology, *where, asked);
  return asked;
}

Tuner::Tuner(const tessera_tuner* table, std::shared_ptr<const plugin::LoadedPlugin> owner)
    : table_(table), owner_(std::move(owner)), name_(table->name) {}

std::string Tuner::origin() const {
  return fmt::format("tuner '{}' of plugin '{}' ({})", name_, owner_->info().name,
                     owner_->info().file.string());
}

std::string Tuner::tune(const tessera_collective_request& request, int64_t bytes,
                        std::vector<TunedCost>& costs) const {
  const tessera_tuner_request asked = tuner_request(request, bytes);
  // The tuner writes into the host's copies; only `seconds` and `vetoed` are read back, so a tuner
  // that scribbles over a name or a size changes nothing the host relies on.
  std::vector<tessera_tuner_cost> rows(costs.size());
  std::vector<tessera_tuner_cost*> row_pointers(costs.size());
  for (size_t i = 0; i < costs.size(); ++i) {
    rows[i] = tessera_tuner_cost{sizeof(tessera_tuner_cost), costs[i].algorithm.c_str(), costs[i].seconds,
                                 costs[i].modelled ? 1 : 0, 0};
    row_pointers[i] = &rows[i];
  }
  tessera_error error{};
  error.struct_size = sizeof(error);
  const tessera_status status = plugin::guarded_status("tune", error, [&] {
    return table_->tune(table_->context, &asked, row_pointers.data(), row_pointers.size(), &error);
  });
  if (status != TESSERA_OK)
    return fmt::format("it failed with status {}: {}", plugin::status_text(status),
                       plugin::error_text(error));
  size_t kept = 0;
  for (size_t i = 0; i < costs.size(); ++i) {
    if (!std::isfinite(rows[i].seconds) || rows[i].seconds < 0)
      return fmt::format("it priced '{}' at {} seconds; a price must be a finite number of seconds >= 0",
                         costs[i].algorithm, rows[i].seconds);
    if (rows[i].vetoed == 0) ++kept;
  }
  if (kept == 0) {
    std::string names;
    for (const TunedCost& cost : costs) names += (names.empty() ? "'" : ", '") + cost.algorithm + "'";
    return fmt::format("it vetoed every applicable algorithm ({}); at least one must stay", names);
  }
  for (size_t i = 0; i < costs.size(); ++i) {
    costs[i].seconds = rows[i].seconds;
    costs[i].vetoed = rows[i].vetoed != 0;
  }
  return {};
}

}  // namespace tessera::comm
