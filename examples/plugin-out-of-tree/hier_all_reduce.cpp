// libtessera-coll-hier.so: a third-party hierarchical all_reduce, algorithm "hier", written with the
// SDK's C++ helpers. The model for an algorithm that uses the SDK 1.3 request topology and tuning.
//
// The group is split into nodes: by the request's TESSERA_LOCALITY_NODE ids (a topology such as the
// preset "nodes:4" states them), else into consecutive blocks of `group_size` ranks, a parameter
// ([plugins.coll-hier] group_size = 4, or TESSERA_PLUGIN_PARAMS="coll-hier.group_size=4"). Then:
//   1. within each node, every member sends its input to the node's leader (its smallest group
//      rank), which folds them into its output in ascending group-rank order;
//   2. the leaders all-reduce their partial sums round a ring (reduce-scatter, then all-gather, over
//      near-equal blocks), nodes in the order of their leaders;
//   3. each leader sends the result to its members.
// Only leaders cross nodes, so the slow inter-node links carry one message per node and step rather
// than one per rank. Every step is fixed by the request (locality ids, count, parameter), so the
// reduction order, and with it every bit of the result, is the same on every run.
//
// estimate() gives the alpha-beta time of those three phases from the request's transfer_time, so
// the selection rule "auto" can compare it with the other loaded algorithms.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

// The parameter `group_size`: 0 = not set (use the request's node locality only). The host sets it
// from one thread while schedules may be built on others; sdk::Parameter guards it.
const sdk::Parameter<int64_t>* block_size = nullptr;

// Group ranks per node, nodes ordered by their leader; each node's members ascending.
struct Nodes {
  std::vector<std::vector<int32_t>> members;
  std::string source;  // how the nodes were found, for messages
};

// The nodes of the request, or an empty list when neither the request nor the parameter says.
Nodes nodes_of(const tessera_collective_request& request) {
  const int32_t p = request.group_size;
  Nodes nodes;
  std::vector<int32_t> ids(static_cast<size_t>(p));
  bool stated = sdk::has_topology(request);
  for (int32_t r = 0; r < p && stated; ++r) {
    ids[static_cast<size_t>(r)] = sdk::locality(request, r, TESSERA_LOCALITY_NODE);
    stated = ids[static_cast<size_t>(r)] >= 0;
  }
  if (stated) {
    nodes.source = "node locality";
  } else if (const auto k = static_cast<int32_t>(block_size->get()); k > 0) {
    for (int32_t r = 0; r < p; ++r) ids[static_cast<size_t>(r)] = r / k;
    nodes.source = "group_size " + std::to_string(k);
  } else {
    return nodes;
  }
  std::map<int32_t, size_t> index_of;  // node id -> position in nodes.members
  for (int32_t r = 0; r < p; ++r) {    // ascending: a node's first member is its leader
    const auto [it, added] = index_of.emplace(ids[static_cast<size_t>(r)], nodes.members.size());
    if (added) nodes.members.emplace_back();
    nodes.members[it->second].push_back(r);
  }
  return nodes;
}

// Whether nodes_of finds nodes, without building them: check() runs on every call that selects
// hier, so it allocates nothing.
bool nodes_known(const tessera_collective_request& request) {
  if (block_size->get() > 0) return true;
  if (!sdk::has_topology(request)) return false;
  for (int32_t r = 0; r < request.group_size; ++r)
    if (sdk::locality(request, r, TESSERA_LOCALITY_NODE) < 0) return false;
  return true;
}

void check(const tessera_collective_request& request) {
  if (request.reduce_op < TESSERA_REDUCE_SUM || request.reduce_op > TESSERA_REDUCE_BXOR)
    throw sdk::Error(TESSERA_UNIMPLEMENTED, "hier: unknown reduce op " + std::to_string(request.reduce_op));
  if (request.group_size > 1 && !nodes_known(request))
    throw sdk::Error(TESSERA_UNIMPLEMENTED,
                     "hier needs to know the nodes: the request's topology states no node locality (use a "
                     "topology such as nodes:K) and the parameter group_size is not set");
}

tessera_chunk whole(int32_t buffer, int64_t n) { return sdk::chunk(buffer, 0, n); }

void all_reduce(const tessera_collective_request& request, const sdk::Schedule& s) {
  if (sdk::schedule_trivial(request, s)) return;
  const int64_t n = request.count;
  const Nodes nodes = nodes_of(request);
  if (nodes.members.empty()) throw sdk::Error(TESSERA_UNIMPLEMENTED, "hier: no nodes to build with");

  // 1. Reduce within each node to its leader, members in ascending order.
  std::vector<int32_t> leaders;
  for (const std::vector<int32_t>& node : nodes.members) {
    const int32_t leader = node.front();
    leaders.push_back(leader);
    s.copy(leader, whole(TESSERA_BUFFER_OUTPUT, n), whole(TESSERA_BUFFER_INPUT, n));
    for (size_t i = 1; i < node.size(); ++i) {
      s.send(node[i], whole(TESSERA_BUFFER_INPUT, n), leader);
      s.recv_reduce(leader, whole(TESSERA_BUFFER_OUTPUT, n), node[i]);
    }
  }

  // 2. Ring all-reduce among the leaders: position j sends to j + 1 and receives from j - 1.
  const auto l = static_cast<int32_t>(leaders.size());
  const std::vector<int64_t> offsets = sdk::block_offsets(n, l);
  const auto block = [&](int64_t index) {
    const int32_t b = sdk::wrap(index, l);
    return sdk::chunk(TESSERA_BUFFER_OUTPUT, offsets[static_cast<size_t>(b)],
                      offsets[static_cast<size_t>(b) + 1] - offsets[static_cast<size_t>(b)]);
  };
  for (int32_t j = 0; j < l; ++j) {
    const int32_t me = leaders[static_cast<size_t>(j)];
    const int32_t right = leaders[static_cast<size_t>(sdk::wrap(j + 1, l))];
    const int32_t left = leaders[static_cast<size_t>(sdk::wrap(j - 1, l))];
    // Reduce-scatter: after step t, position j has folded t + 2 contributions into block j - t - 1.
    for (int32_t t = 0; t < l - 1; ++t) {
      s.send(me, block(j - t), right);
      s.recv_reduce(me, block(j - t - 1), left);
    }
    // All-gather: position j starts with the complete block j + 1.
    for (int32_t t = 0; t < l - 1; ++t) {
      s.send(me, block(j + 1 - t), right);
      s.recv(me, block(j - t), left);
    }
  }

  // 3. Broadcast within each node.
  for (const std::vector<int32_t>& node : nodes.members)
    for (size_t i = 1; i < node.size(); ++i) {
      s.send(node.front(), whole(TESSERA_BUFFER_OUTPUT, n), node[i]);
      s.recv(node[i], whole(TESSERA_BUFFER_OUTPUT, n), node.front());
    }
}

// The three phases' alpha-beta times. Messages of one phase run on different links at once, so a
// phase takes as long as its slowest message; ring steps follow each other.
double estimate(const tessera_collective_request& request) {
  if (request.count == 0 || request.group_size == 1) return 0.0;
  if (!sdk::has_topology(request))
    throw sdk::Error(TESSERA_UNIMPLEMENTED, "hier: no topology in the request to estimate with");
  const Nodes nodes = nodes_of(request);
  const int64_t bytes = request.count * sdk::element_bytes(request);
  double gather = 0.0, scatter = 0.0;
  for (const std::vector<int32_t>& node : nodes.members)
    for (size_t i = 1; i < node.size(); ++i) {
      gather = std::max(gather, sdk::transfer_time(request, node[i], node.front(), bytes));
      scatter = std::max(scatter, sdk::transfer_time(request, node.front(), node[i], bytes));
    }
  const auto l = static_cast<int64_t>(nodes.members.size());
  const int64_t block_bytes = (request.count + l - 1) / l * sdk::element_bytes(request);
  double ring_step = 0.0;
  for (int64_t j = 0; j < l && l > 1; ++j)
    ring_step = std::max(
        ring_step, sdk::transfer_time(request, nodes.members[static_cast<size_t>(j)].front(),
                                      nodes.members[static_cast<size_t>((j + 1) % l)].front(), block_bytes));
  return gather + 2.0 * static_cast<double>(l - 1) * ring_step + scatter;
}

void describe(sdk::PluginBuilder& plugin) {
  // [plugins.coll-hier] group_size = 4, or TESSERA_PLUGIN_PARAMS="coll-hier.group_size=4".
  block_size = &plugin.parameter<int64_t>("group_size", 0, sdk::integer_in(1, 65536));
  static sdk::AlgorithmBuilder hier("hier");
  hier.collective(TESSERA_COLL_ALL_REDUCE, &all_reduce, &check).estimate(TESSERA_COLL_ALL_REDUCE, &estimate);
  plugin.add_algorithm(hier);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-hier", "0.1.0", "Hierarchical all_reduce: within nodes, then across", describe)
