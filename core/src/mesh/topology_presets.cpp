// The preset topologies, their text form ("ring", "torus:2x4", ...) and the process-wide default
// that collectives and meshes use when no topology is given.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "comm/algorithm.hpp"
#include "plugin/startup_configuration.hpp"
#include "tessera/errors.hpp"
#include "tessera/topology.hpp"

namespace tessera {
namespace {

void check_world(const char* preset, int world) {
  if (world <= 0)
    throw Error(fmt::format("Topology::{}: the world must have at least one rank, got {}", preset, world));
}

// Undirected links without repeats: small tori wrap onto the same neighbour twice (2 rows: up and
// down are one rank), which is one link, not two.
class LinkSet {
 public:
  void add(int a, int b, double bandwidth, double latency) {
    if (a == b || !pairs_.insert(std::minmax(a, b)).second) return;
    links_.push_back(Link{a, b, bandwidth, latency});
  }
  std::vector<Link> take() { return std::move(links_); }

 private:
  std::set<std::pair<int, int>> pairs_;
  std::vector<Link> links_;
};

}  // namespace

Topology Topology::fully_connected(int world, double bandwidth, double latency) {
  check_world("fully_connected", world);
  return uniform_complete(world, bandwidth, latency, "fully_connected");
}

Topology Topology::ring(int world, double bandwidth, double latency) {
  check_world("ring", world);
  LinkSet links;
  for (int r = 0; r < world; ++r) links.add(r, (r + 1) % world, bandwidth, latency);
  return custom(world, links.take(), "ring");
}

Topology Topology::torus_2d(int rows, int cols, double bandwidth, double latency) {
  if (rows <= 0 || cols <= 0)
    throw Error(fmt::format(
        "Topology::torus_2d: {}x{} has a non-positive side; rows and cols must be positive", rows, cols));
  LinkSet links;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      // Right and down neighbours; left and up are some other rank's right and down.
      links.add(i * cols + j, i * cols + (j + 1) % cols, bandwidth, latency);
      links.add(i * cols + j, ((i + 1) % rows) * cols + j, bandwidth, latency);
    }
  return custom(rows * cols, links.take(), fmt::format("torus:{}x{}", rows, cols));
}

Topology Topology::nodes(int world, int ranks_per_node, double intra_bandwidth, double intra_latency,
                         double inter_bandwidth, double inter_latency) {
  check_world("nodes", world);
  if (ranks_per_node <= 0 || world % ranks_per_node != 0)
    throw Error(fmt::format("Topology::nodes: {} ranks per node does not divide the world of {} ranks",
                            ranks_per_node, world));
  LinkSet links;
  for (int a = 0; a < world; ++a)
    for (int b = a + 1; b < world; ++b) {
      if (a / ranks_per_node == b / ranks_per_node)
        links.add(a, b, intra_bandwidth, intra_latency);
      else if (a % ranks_per_node == b % ranks_per_node)
        links.add(a, b, inter_bandwidth, inter_latency);
    }
  // Node domains are what hierarchical algorithms group by (Topology::locality).
  std::vector<int32_t> node_of(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) node_of[static_cast<size_t>(r)] = r / ranks_per_node;
  return custom(world, links.take(), fmt::format("nodes:{}", ranks_per_node))
      .with_locality(kLocalityNode, std::move(node_of));
}

namespace {

constexpr const char* kAcceptedForms =
    "accepted forms: \"fully_connected\", \"ring\", \"torus:RxC\" (R*C = world), \"nodes:K\" (K divides "
    "world)";

// A preset's text, parsed but not yet sized to a world.
struct PresetForm {
  enum Kind { kFullyConnected, kRing, kTorus, kNodes } kind;
  int rows = 0;            // torus
  int cols = 0;            // torus
  int ranks_per_node = 0;  // nodes
};

// A positive decimal integer filling all of `text`, or 0.
int parse_positive(const std::string& text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value > 0 ? value : 0;
}

PresetForm parse_preset(const std::string& text) {
  const auto bad = [&text] {
    return ConfigError(fmt::format("topology preset '{}' is not valid; {}", text, kAcceptedForms));
  };
  if (text == "fully_connected") return {PresetForm::kFullyConnected};
  if (text == "ring") return {PresetForm::kRing};
  if (text.rfind("torus:", 0) == 0) {
    const std::string sides = text.substr(6);
    const size_t x = sides.find('x');
    if (x == std::string::npos) throw bad();
    PresetForm form{PresetForm::kTorus, parse_positive(sides.substr(0, x)),
                    parse_positive(sides.substr(x + 1))};
    if (form.rows == 0 || form.cols == 0) throw bad();
    return form;
  }
  if (text.rfind("nodes:", 0) == 0) {
    PresetForm form{PresetForm::kNodes};
    form.ranks_per_node = parse_positive(text.substr(6));
    if (form.ranks_per_node == 0) throw bad();
    return form;
  }
  throw bad();
}

// The size checks of a parsed preset against a world: a ConfigError naming both when it does not fit.
void require_fit(const std::string& text, const PresetForm& form, int world) {
  if (world <= 0)
    throw ConfigError(
        fmt::format("topology preset '{}': the world must have at least one rank, got {}", text, world));
  if (form.kind == PresetForm::kTorus && static_cast<int64_t>(form.rows) * form.cols != world)
    throw ConfigError(fmt::format("topology preset '{}' has {}x{} = {} ranks but the world has {}; {}", text,
                                  form.rows, form.cols, static_cast<int64_t>(form.rows) * form.cols, world,
                                  kAcceptedForms));
  if (form.kind == PresetForm::kNodes && world % form.ranks_per_node != 0)
    throw ConfigError(
        fmt::format("topology preset '{}': {} ranks per node does not divide the world of {} ranks; {}", text,
                    form.ranks_per_node, world, kAcceptedForms));
}

}  // namespace

void check_topology_preset(const std::string& text, int world) {
  require_fit(text, parse_preset(text), world);
}

Topology Topology::preset(const std::string& text, int world) {
  const PresetForm form = parse_preset(text);
  require_fit(text, form, world);
  switch (form.kind) {
    case PresetForm::kFullyConnected:
      return fully_connected(world);
    case PresetForm::kRing:
      return ring(world);
    case PresetForm::kTorus:
      return torus_2d(form.rows, form.cols);
    case PresetForm::kNodes:
      return nodes(world, form.ranks_per_node);
  }
  throw Error(fmt::format("topology preset '{}': unhandled form", text));  // every form is handled above
}

namespace {

std::mutex default_mutex;
std::string default_preset;  // "" = fully connected (configuration: process-wide by design)

}  // namespace

// Built afresh each time (a fully connected one is not materialised, so this is cheap): whoever
// asks often keeps its own (a world keeps its topology and the paths computed on it).
Topology default_topology(int world) {
  const std::string preset = default_topology_preset();
  return preset.empty() ? Topology::fully_connected(world) : Topology::preset(preset, world);
}

std::string default_topology_preset() {
  std::lock_guard lock(default_mutex);
  return default_preset;
}

void set_default_topology(const std::string& preset) {
  // First, so that start-up configuration applied later cannot undo the program's own choice.
  // (configure() calls this too: the nested call returns at once.)
  plugin::apply_startup_configuration();
  // Checked now for its form; whether its size fits a world is known only when a world asks.
  if (!preset.empty()) parse_preset(preset);
  std::lock_guard lock(default_mutex);
  default_preset = preset;
  comm::note_algorithms_changed();  // choices remembered (ring orders, auto) rest on the topology
}

}  // namespace tessera
