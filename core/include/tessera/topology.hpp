// The links between ranks: a graph whose vertices are global ranks and whose edges are links with
// a bandwidth and a latency. It feeds the cost model (alpha-beta per link, shortest paths for
// ranks that are not directly linked) and the order in which ring algorithms visit ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

struct Link {
  int a;
  int b;
  double bandwidth;  // bytes per second
  double latency;    // seconds
};

class Topology {
 public:
  // Presets over `world` ranks. Bandwidths in bytes/s, latencies in seconds.
  static Topology fully_connected(int world, double bandwidth = 100e9, double latency = 2e-6);
  static Topology ring(int world, double bandwidth = 100e9, double latency = 2e-6);
  // rows x cols ranks, row-major, each linked to its four neighbours with wrap-around.
  static Topology torus_2d(int rows, int cols, double bandwidth = 100e9, double latency = 2e-6);
  // Nodes of `ranks_per_node` consecutive ranks: fully connected fast links inside a node, and a
  // slower link between every pair of ranks with the same local index on different nodes.
  static Topology nodes(int world, int ranks_per_node, double intra_bandwidth = 300e9,
                        double intra_latency = 1e-6, double inter_bandwidth = 25e9,
                        double inter_latency = 10e-6);
  // "fully_connected", "ring", "torus:RxC", "nodes:K" (e.g. "nodes:4") over `world` ranks; throws
  // ConfigError naming the text and the accepted forms.
  static Topology preset(const std::string& text, int world);
  // Any graph: `world` vertices and the given undirected links.
  static Topology custom(int world, std::vector<Link> links, std::string name = "custom");

  int world() const;
  const std::string& name() const;
  const std::vector<Link>& links() const;
  // The cheapest path (by latency + bytes / bandwidth for `bytes`) from a to b, as ranks a..b.
  std::vector<int> path(int a, int b, int64_t bytes = 0) const;
  // The same path written into `ranks` (its storage reused: the cost model asks for one per message).
  void path_into(int a, int b, int64_t bytes, std::vector<int>& ranks) const;
  // Alpha-beta time of sending `bytes` from a to b along that path (store-and-forward per hop).
  double transfer_time(int a, int b, int64_t bytes) const;
  // An order of `ranks` for ring algorithms that keeps consecutive ranks close (greedy nearest
  // neighbour from ranks[0] by latency); the natural order when every link is equal.
  std::vector<int> ring_order(const std::vector<int>& ranks) const;
  // The link joining neighbours a and b (the last one given when several do); throws when none does.
  Link link(int a, int b) const;

  // Locality domains, for hierarchical collective algorithms (SDK: TESSERA_LOCALITY_*): at each
  // level, ranks with the same id share a domain. Levels, innermost first:
  static constexpr int kLocalityNuma = 0, kLocalityNode = 1, kLocalitySwitch = 2, kLocalityLevels = 3;
  // A copy of this topology (sharing its links and computed paths) that states the domains of one
  // level: ids[r] for rank r, world() entries, each >= 0 or -1 for "not stated". Throws Error for a
  // level outside 0..2, a wrong number of ids or an id below -1.
  Topology with_locality(int level, std::vector<int32_t> ids) const;
  // Rank `rank`'s domain at `level`; -1 when the topology does not state that level (or the rank
  // or level is out of range: this is asked by plugins through the SDK, where errors cannot throw).
  // O(1). nodes(world, K) states the node level (rank / K); the other presets state none: a fully
  // connected topology of equal links, a ring or a torus has no domains to tell apart.
  int32_t locality(int rank, int level) const;
  // Identifies the topology's content (world, links, domains) for caches that depend on it: equal
  // for topologies built the same way (the same preset over the same world, in any world object),
  // different (up to a 64-bit hash collision) when a link or domain differs. Computed once.
  uint64_t fingerprint() const;
  // Whether every two ranks are joined directly by equal links and no locality domain is stated
  // (the fully connected preset). Then a group of ranks sees the same topology as any other group
  // of its size, in any order: what depends on a group only through the topology (a collective's
  // schedule, its estimated cost) is the same for every group of one size. O(1).
  bool uniform() const;

  // Shortest paths are computed once per (source, message size) and remembered; copies of a
  // Topology share them, and sharing one between threads is safe. A fully connected topology of
  // equal links needs none (every path is the direct link) and builds no link list unless links()
  // asks, so one over thousands of ranks costs nothing.
  // How many shortest-path trees this topology and its copies have computed (diagnostics: the
  // number stays put while cached paths are reused).
  int64_t shortest_path_trees() const;
  struct Graph;  // the implementation's

 private:
  // Fully connected with equal links, without building world^2/2 links up front.
  static Topology uniform_complete(int world, double bandwidth, double latency, std::string name);
  std::shared_ptr<const Graph> graph_;
  struct Locality;  // the domains with_locality stated, and the fingerprint including them
  std::shared_ptr<const Locality> locality_;
};

// The topology collectives and cost estimates use when none is given: the configured preset
// ([topology] preset = "...") or fully connected over the ranks involved.
Topology default_topology(int world);
void set_default_topology(const std::string& preset);  // "" = fully connected
std::string default_topology_preset();                 // "" = fully connected
// A ConfigError when `preset` is malformed or does not fit a world of `world` ranks (a torus of
// another size, nodes:K with K not dividing it): init_world() checks the configured preset this way.
void check_topology_preset(const std::string& preset, int world);

}  // namespace tessera
