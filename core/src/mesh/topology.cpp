// Topology: the link graph and its shortest paths. The graph is a Boost.Graph adjacency list whose
// edges carry (bandwidth, latency); edge weights depend on the message size (alpha-beta:
// latency + bytes / bandwidth), so Dijkstra runs with a weight map computed on the fly, once per
// (source, message size): the trees are remembered by the topology.
#include "tessera/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "tessera/errors.hpp"

namespace tessera {
namespace {

struct LinkCost {
  // Initialised: Boost default-constructs edge properties when it copies a graph.
  double bandwidth = 0;
  double latency = 0;
};

using LinkGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, LinkCost>;

}  // namespace

namespace {

// Shortest-path tree from one source for messages of one size: distance and predecessor per rank.
struct ShortestPaths {
  std::vector<double> time;
  std::vector<LinkGraph::vertex_descriptor> previous;
};

// Trees kept per topology before the cache starts over (in ranks: world x trees).
constexpr size_t kTreeCacheRanks = size_t{1} << 24;

}  // namespace

struct Topology::Graph {
  int world = 0;
  std::string name;
  // Set for a fully connected topology of equal links: every path is the direct link, so neither
  // the graph nor the link list is built unless links() asks; a world of thousands costs nothing.
  std::optional<LinkCost> uniform;
  LinkGraph graph;                                // empty when uniform
  std::map<std::pair<int, int>, size_t> link_at;  // (a, b) either way -> index in links; the last given wins

  // Filled on first use (links() of a uniform topology, shortest-path trees of any): a Topology is
  // immutable to its users, these only remember what was computed.
  mutable std::once_flag links_made;
  mutable std::vector<Link> links;
  mutable std::mutex trees_mutex;
  mutable std::map<std::pair<int, int64_t>, std::shared_ptr<const ShortestPaths>> trees;  // (source, bytes)
  mutable std::atomic<int64_t> trees_computed{0};
  uint64_t fingerprint = 0;  // of world and links (fingerprint())
};

struct Topology::Locality {
  std::array<std::vector<int32_t>, kLocalityLevels> ids;  // per level: world() ids, or empty when not stated
  uint64_t fingerprint = 0;                               // the graph's, mixed with every stated level
};

namespace {

ShortestPaths shortest_paths(const LinkGraph& graph, int source, int64_t bytes) {
  const auto vertices = boost::num_vertices(graph);
  ShortestPaths paths{std::vector<double>(vertices), std::vector<LinkGraph::vertex_descriptor>(vertices)};
  const double size = static_cast<double>(bytes);
  auto hop_time = boost::make_function_property_map<LinkGraph::edge_descriptor, double>(
      [&graph, size](LinkGraph::edge_descriptor e) { return graph[e].latency + size / graph[e].bandwidth; });
  boost::dijkstra_shortest_paths(graph, static_cast<LinkGraph::vertex_descriptor>(source),
                                 boost::weight_map(hop_time)
                                     .distance_map(boost::make_iterator_property_map(
                                         paths.time.begin(), boost::get(boost::vertex_index, graph)))
                                     .predecessor_map(boost::make_iterator_property_map(
                                         paths.previous.begin(), boost::get(boost::vertex_index, graph))));
  return paths;
}

// The tree from `source` for `bytes`: Dijkstra runs once per (topology, source, size), however
// many messages ask (a collective over p ranks sends up to p^2 of them).
std::shared_ptr<const ShortestPaths> tree_from(const Topology::Graph& g, int source, int64_t bytes) {
  const auto key = std::make_pair(source, bytes);
  {
    std::lock_guard lock(g.trees_mutex);
    if (auto it = g.trees.find(key); it != g.trees.end()) return it->second;
  }
  auto tree = std::make_shared<const ShortestPaths>(shortest_paths(g.graph, source, bytes));
  ++g.trees_computed;
  std::lock_guard lock(g.trees_mutex);
  if ((g.trees.size() + 1) * static_cast<size_t>(g.world) > kTreeCacheRanks) g.trees.clear();
  return g.trees.emplace(key, std::move(tree)).first->second;
}

// FNV-1a over 64-bit words: a content hash for Topology::fingerprint (not for security).
class Hash {
 public:
  Hash& add(uint64_t word) {
    for (int i = 0; i < 8; ++i) value_ = (value_ ^ ((word >> (8 * i)) & 0xffu)) * 0x100000001b3ull;
    return *this;
  }
  Hash& add(double d) { return add(std::bit_cast<uint64_t>(d)); }
  Hash& add(int64_t i) { return add(static_cast<uint64_t>(i)); }
  uint64_t value() const { return value_; }

 private:
  uint64_t value_ = 0xcbf29ce484222325ull;
};

bool unreachable(double time) { return time == std::numeric_limits<double>::max() || std::isinf(time); }

void check_link(const std::string& name, int world, const Link& link) {
  for (int end : {link.a, link.b})
    if (end < 0 || end >= world)
      throw Error(fmt::format("Topology '{}': link {}-{} names rank {}, outside 0..{}", name, link.a, link.b,
                              end, world - 1));
  if (link.a == link.b)
    throw Error(fmt::format("Topology '{}': link {}-{} joins a rank to itself", name, link.a, link.b));
  // Written as negations so that NaN is rejected too.
  if (!(link.bandwidth > 0))
    throw Error(
        fmt::format("Topology '{}': link {}-{} has bandwidth {}; bandwidth must be positive (bytes/s)", name,
                    link.a, link.b, link.bandwidth));
  if (!(link.latency >= 0))
    throw Error(
        fmt::format("Topology '{}': link {}-{} has latency {}; latency must be non-negative (seconds)", name,
                    link.a, link.b, link.latency));
}

}  // namespace

Topology Topology::custom(int world, std::vector<Link> links, std::string name) {
  if (world <= 0)
    throw Error(fmt::format("Topology '{}': the world must have at least one rank, got {}", name, world));
  auto graph = std::make_shared<Graph>();
  graph->world = world;
  graph->name = std::move(name);
  graph->graph = LinkGraph(static_cast<LinkGraph::vertices_size_type>(world));
  for (size_t i = 0; i < links.size(); ++i) {
    const Link& link = links[i];
    check_link(graph->name, world, link);
    boost::add_edge(static_cast<LinkGraph::vertex_descriptor>(link.a),
                    static_cast<LinkGraph::vertex_descriptor>(link.b), LinkCost{link.bandwidth, link.latency},
                    graph->graph);
    graph->link_at[{link.a, link.b}] = i;
    graph->link_at[{link.b, link.a}] = i;
  }
  Hash hash;
  hash.add(int64_t{world}).add(int64_t{0});  // 0: a graph of links (1: uniform, below)
  for (const Link& link : links)
    hash.add(int64_t{link.a}).add(int64_t{link.b}).add(link.bandwidth).add(link.latency);
  graph->fingerprint = hash.value();
  graph->links = std::move(links);
  std::call_once(graph->links_made, [] {});
  Topology topology;
  topology.graph_ = std::move(graph);
  return topology;
}

Topology Topology::uniform_complete(int world, double bandwidth, double latency, std::string name) {
  if (world <= 0)
    throw Error(fmt::format("Topology '{}': the world must have at least one rank, got {}", name, world));
  if (world > 1) check_link(name, world, Link{0, 1, bandwidth, latency});
  auto graph = std::make_shared<Graph>();
  graph->world = world;
  graph->name = std::move(name);
  graph->uniform = LinkCost{bandwidth, latency};
  graph->fingerprint = Hash().add(int64_t{world}).add(int64_t{1}).add(bandwidth).add(latency).value();
  Topology topology;
  topology.graph_ = std::move(graph);
  return topology;
}

int Topology::world() const { return graph_ ? graph_->world : 0; }

Topology Topology::with_locality(int level, std::vector<int32_t> ids) const {
  if (level < 0 || level >= kLocalityLevels)
    throw Error(fmt::format("Topology '{}': locality level {} is not one of 0 (NUMA), 1 (node), 2 (switch)",
                            name(), level));
  if (ids.size() != static_cast<size_t>(world()))
    throw Error(fmt::format(
        "Topology '{}': locality level {} has {} ids for a world of {} ranks; expected one per rank", name(),
        level, ids.size(), world()));
  for (size_t r = 0; r < ids.size(); ++r)
    if (ids[r] < -1)
      throw Error(
          fmt::format("Topology '{}': locality level {} gives rank {} the id {}; ids are >= 0, or -1 for "
                      "not stated",
                      name(), level, r, ids[r]));
  auto locality = std::make_shared<Locality>(locality_ ? *locality_ : Locality{});
  locality->ids[static_cast<size_t>(level)] = std::move(ids);
  // Every level is rehashed from the graph's fingerprint: stating the same domains in another order
  // gives the same topology.
  Hash hash;
  hash.add(graph_ ? graph_->fingerprint : uint64_t{0});
  for (size_t l = 0; l < locality->ids.size(); ++l) {
    hash.add(static_cast<int64_t>(locality->ids[l].size()));
    for (int32_t id : locality->ids[l]) hash.add(int64_t{id});
  }
  locality->fingerprint = hash.value();
  Topology copy = *this;
  copy.locality_ = std::move(locality);
  return copy;
}

int32_t Topology::locality(int rank, int level) const {
  if (!locality_ || level < 0 || level >= kLocalityLevels) return -1;
  const std::vector<int32_t>& ids = locality_->ids[static_cast<size_t>(level)];
  return rank >= 0 && static_cast<size_t>(rank) < ids.size() ? ids[static_cast<size_t>(rank)] : -1;
}

uint64_t Topology::fingerprint() const {
  if (locality_) return locality_->fingerprint;
  return graph_ ? graph_->fingerprint : 0;
}

bool Topology::uniform() const {
  // Stated domains tell ranks apart even over equal links (a hierarchical algorithm groups by
  // them), so any locality at all makes the topology non-uniform.
  return graph_ && graph_->uniform && !locality_;
}

int64_t Topology::shortest_path_trees() const { return graph_ ? graph_->trees_computed.load() : 0; }

const std::string& Topology::name() const {
  static const std::string none = "empty";
  return graph_ ? graph_->name : none;
}

const std::vector<Link>& Topology::links() const {
  static const std::vector<Link> none;
  if (!graph_) return none;
  std::call_once(graph_->links_made, [g = graph_.get()] {
    for (int a = 0; a < g->world; ++a)
      for (int b = a + 1; b < g->world; ++b)
        g->links.push_back(Link{a, b, g->uniform->bandwidth, g->uniform->latency});
  });
  return graph_->links;
}

namespace {

void check_rank(const std::string& name, int world, int rank) {
  if (rank < 0 || rank >= world)
    throw Error(world == 0 ? fmt::format("Topology: rank {} asked of an empty topology (no ranks)", rank)
                           : fmt::format("Topology '{}': rank {} is outside 0..{}", name, rank, world - 1));
}

}  // namespace

Link Topology::link(int a, int b) const {
  check_rank(name(), world(), a);
  check_rank(name(), world(), b);
  if (a != b && graph_->uniform) return Link{a, b, graph_->uniform->bandwidth, graph_->uniform->latency};
  const auto it = graph_->link_at.find({a, b});
  if (it == graph_->link_at.end())
    throw Error(fmt::format("Topology '{}': no link joins rank {} and rank {}", name(), a, b));
  return graph_->links[it->second];
}

std::vector<int> Topology::path(int a, int b, int64_t bytes) const {
  std::vector<int> ranks;
  path_into(a, b, bytes, ranks);
  return ranks;
}

void Topology::path_into(int a, int b, int64_t bytes, std::vector<int>& ranks) const {
  check_rank(name(), world(), a);
  check_rank(name(), world(), b);
  if (bytes < 0)
    throw Error(
        fmt::format("Topology '{}': a path for {} bytes; the size must be non-negative", name(), bytes));
  ranks.clear();
  if (a == b) {
    ranks.push_back(a);
    return;
  }
  if (graph_->uniform) {
    ranks.assign({a, b});
    return;
  }
  const std::shared_ptr<const ShortestPaths> paths = tree_from(*graph_, a, bytes);
  if (unreachable(paths->time[static_cast<size_t>(b)]))
    throw Error(fmt::format("Topology '{}': no path from rank {} to rank {} (the graph is disconnected)",
                            name(), a, b));
  ranks.push_back(b);
  for (auto v = static_cast<LinkGraph::vertex_descriptor>(b);
       v != static_cast<LinkGraph::vertex_descriptor>(a);) {
    v = paths->previous[v];
    ranks.push_back(static_cast<int>(v));
  }
  std::reverse(ranks.begin(), ranks.end());
}

double Topology::transfer_time(int a, int b, int64_t bytes) const {
  const std::vector<int> hops = path(a, b, bytes);
  if (graph_->uniform)
    return hops.size() == 1
               ? 0.0
               : graph_->uniform->latency + static_cast<double>(bytes) / graph_->uniform->bandwidth;
  // Store-and-forward: every hop pays its latency and moves the whole message. Recomputed along the
  // path (rather than taken from Dijkstra's distance) so that the sum is always in hop order.
  double time = 0;
  for (size_t i = 1; i < hops.size(); ++i) {
    double best = std::numeric_limits<double>::infinity();
    const auto [edges, end] =
        boost::out_edges(static_cast<LinkGraph::vertex_descriptor>(hops[i - 1]), graph_->graph);
    for (auto e = edges; e != end; ++e) {
      if (boost::target(*e, graph_->graph) != static_cast<LinkGraph::vertex_descriptor>(hops[i])) continue;
      const LinkCost& link = graph_->graph[*e];
      best = std::min(best, link.latency + static_cast<double>(bytes) / link.bandwidth);
    }
    time += best;
  }
  return time;
}

std::vector<int> Topology::ring_order(const std::vector<int>& ranks) const {
  std::set<int> seen;
  for (int r : ranks) {
    check_rank(name(), world(), r);
    if (!seen.insert(r).second)
      throw Error(fmt::format("Topology '{}': ring_order: rank {} appears twice", name(), r));
  }
  if (ranks.empty()) return {};
  // Greedy nearest neighbour by latency (0-byte transfer time) from ranks[0]; ties go to the
  // smallest rank, so equal links give back the natural order.
  std::vector<int> order{ranks.front()};
  std::set<int> left(ranks.begin() + 1, ranks.end());
  // Every link equal: each step's nearest is the smallest rank left.
  if (graph_->uniform) {
    order.insert(order.end(), left.begin(), left.end());
    return order;
  }
  while (!left.empty()) {
    const std::shared_ptr<const ShortestPaths> paths = tree_from(*graph_, order.back(), 0);
    int nearest = *left.begin();
    for (int r : left)
      if (paths->time[static_cast<size_t>(r)] < paths->time[static_cast<size_t>(nearest)]) nearest = r;
    const double time = paths->time[static_cast<size_t>(nearest)];
    if (unreachable(time))
      throw Error(fmt::format("Topology '{}': no path from rank {} to rank {} (the graph is disconnected)",
                              name(), order.back(), nearest));
    order.push_back(nearest);
    left.erase(nearest);
  }
  return order;
}

}  // namespace tessera
