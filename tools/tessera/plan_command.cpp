// tessera plan --mesh 4x2 --shape 1024x1024 --from "S(0),R" --to "R,S(1)": what redistributing a
// DTensor costs. The redistribution is really run (in a LocalMode over the mesh) under a
// CommCounter, once with the collective rules in force and once per loaded algorithm, so the
// steps, bytes and estimated times shown are exactly what a program would issue.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <tessera/tessera.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {

struct PlanOptions {
  std::string mesh;
  std::string shape;
  std::string from;
  std::string to;
  std::string topology;  // "" = the configured default (fully connected unless configured)
  std::string dtype = "float32";
  std::string names;
};

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end; (end = text.find(separator, start)) != std::string::npos; start = end + 1)
    parts.push_back(text.substr(start, end - start));
  parts.push_back(text.substr(start));
  return parts;
}

// "4x2" -> {4, 2}. Sizes are checked here, before anything is allocated.
std::vector<int64_t> parse_sizes(const std::string& option, const std::string& text, int64_t minimum) {
  std::vector<int64_t> sizes;
  const auto bad = [&](const std::string& why) {
    return Error(fmt::format("{} '{}': {}; expected sizes separated by 'x', e.g. 4x2", option, text, why));
  };
  for (const std::string& part : split(text, 'x')) {
    if (part.empty() || part.size() > 12 || !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw bad(fmt::format("'{}' is not a size", part));
    const int64_t size = std::stoll(part);
    if (size < minimum) throw bad(fmt::format("sizes must be at least {}", minimum));
    sizes.push_back(size);
  }
  return sizes;
}

DType parse_dtype(const std::string& text) {
  for (DType d : {kFloat32, kFloat64, kInt32, kInt64})
    if (dtype_name(d) == text) return d;
  throw Error(fmt::format("--dtype '{}': expected float32, float64, int32 or int64", text));
}

// Placement text checked against the mesh and shape, so mistakes are named in the user's terms.
Placements parse_for(const std::string& option, const std::string& text, size_t mesh_dims, size_t tensor_dims) {
  Placements placements;
  try {
    placements = parse_placements(text);
  } catch (const Error& e) {
    throw Error(fmt::format("{} '{}': {}", option, text, e.what()));
  }
  if (placements.size() != mesh_dims)
    throw Error(fmt::format("{} '{}' gives {} placement(s) but the mesh has {} dim(s); give one per mesh dim", option,
                            text, placements.size(), mesh_dims));
  for (const Placement& p : placements) {
    const auto n = static_cast<int64_t>(tensor_dims);
    if (p.is_shard() && (p.dim() < -n || p.dim() >= n))
      throw Error(fmt::format("{} '{}': {} shards tensor dim {} but the shape has {} dim(s)", option, text,
                              p.to_string(), p.dim(), n));
  }
  return placements;
}

// "4.0 MiB"; plain bytes below 1 KiB.
std::string bytes_text(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  return unit == 0 ? fmt::format("{} bytes", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

int64_t largest_shard_bytes(const Tensor& local) {
  int64_t most = 0;
  for (const auto& [rank, shard] : local.shards())
    most = std::max(most, shard.numel() * static_cast<int64_t>(itemsize(shard.dtype())));
  return most;
}

// Restores process-wide settings the plan changes, also when it ends by an exception.
struct RestoreSettings {
  std::string rules = dist::algorithms();
  bool topology_set = false;  // only then: the configured default is not known to restore it
  ~RestoreSettings() {
    try {
      dist::set_algorithms(rules);
      if (topology_set) set_default_topology("");
    } catch (const std::exception&) {  // the rules were valid when saved; nothing useful to report
    }
  }
};

using Rows = std::vector<CommCounter::Entry>;
bool same_rows(const Rows& a, const Rows& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.collective == y.collective && x.mesh_dim == y.mesh_dim && x.algorithm == y.algorithm &&
           x.calls == y.calls && x.bytes_per_rank == y.bytes_per_rank && x.seconds == y.seconds;
  });
}

struct Outcome {
  std::vector<std::string> settings;  // the rule settings that gave these rows
  Rows rows;
  std::string table;
  double seconds = 0;
};

int plan(const PlanOptions& options) {
  const std::vector<int64_t> mesh_shape = parse_sizes("--mesh", options.mesh, 1);
  const std::vector<int64_t> shape = parse_sizes("--shape", options.shape, 0);
  const DType dtype = parse_dtype(options.dtype);
  std::vector<std::string> names;
  if (!options.names.empty()) names = split(options.names, ',');
  if (!names.empty() && names.size() != mesh_shape.size())
    throw Error(fmt::format("--names '{}' gives {} name(s) but the mesh has {} dim(s)", options.names, names.size(),
                            mesh_shape.size()));
  const Placements from = parse_for("--from", options.from, mesh_shape.size(), shape.size());
  const Placements to = parse_for("--to", options.to, mesh_shape.size(), shape.size());

  int64_t world = 1;
  int64_t elements = 1;
  for (int64_t size : mesh_shape)
    if ((world *= size) > 65536) throw Error(fmt::format("--mesh '{}': more than 65536 ranks", options.mesh));
  for (int64_t size : shape) {
    if (size != 0 && elements > std::numeric_limits<int64_t>::max() / 16 / size)
      throw Error(fmt::format("--shape '{}': too many elements", options.shape));
    elements *= size;
  }
  const int64_t bytes = elements * static_cast<int64_t>(itemsize(dtype));

  RestoreSettings restore;
  if (!options.topology.empty()) {
    // Checked against this world first: set_default_topology alone only checks the preset's form.
    Topology::preset(options.topology, static_cast<int>(world));
    set_default_topology(options.topology);
    restore.topology_set = true;
  }

  LocalMode mode(static_cast<int>(world));
  const DeviceMesh mesh = init_device_mesh("cpu", mesh_shape, names);
  // distribute_tensor rejects Partial, so a Partial source is laid out as Replicate (same shard
  // shapes) and relabelled: every rank then holds a full-size term of the pending reduction.
  Placements laid_out = from;
  for (Placement& p : laid_out)
    if (p.is_partial()) p = Replicate();
  Tensor global;
  {
    const auto plain = mode.disable();
    global = zeros(shape, TensorOptions(dtype));
  }
  const DTensor source = from_local(distribute_tensor(global, mesh, laid_out).to_local(), mesh, from, shape);
  global = Tensor();  // only the shards are needed from here on

  std::vector<std::pair<std::string, std::string>> settings = {{"default", restore.rules}};
  for (const std::string& name : dist::algorithm_names())
    // Each rule falls through when the algorithm does not offer a collective or does not apply
    // to the request (a group size it cannot handle), so "direct" covers the rest.
    settings.emplace_back(name, fmt::format("*:{};*:direct", name));

  std::vector<Outcome> outcomes;
  int64_t target_bytes = 0;
  for (const auto& [label, rules] : settings) {
    dist::set_algorithms(rules);
    const CommCounter counter;
    const DTensor target = source.redistribute(to);
    target_bytes = largest_shard_bytes(target.to_local());
    Rows rows = counter.entries();
    auto same = std::find_if(outcomes.begin(), outcomes.end(), [&](const Outcome& o) { return same_rows(o.rows, rows); });
    if (same != outcomes.end()) {
      same->settings.push_back(label);
      continue;
    }
    outcomes.push_back({{label}, std::move(rows), counter.table(), counter.seconds()});
  }

  // Printed only now, so that a redistribution that is not possible prints just the error.
  std::cout << fmt::format("mesh      [{}] ({} ranks{})\n", fmt::join(mesh_shape, ", "), world,
                           names.empty() ? "" : fmt::format("; dims {}", fmt::join(names, ", ")))
            << fmt::format("tensor    {} [{}], {} bytes ({})\n", dtype_name(dtype), fmt::join(shape, ", "), bytes,
                           bytes_text(bytes))
            << fmt::format("from      {}  (largest shard {})\n", placements_text(from),
                           bytes_text(largest_shard_bytes(source.to_local())))
            << fmt::format("to        {}  (largest shard {})\n", placements_text(to), bytes_text(target_bytes))
            << fmt::format("topology  {}\n", default_topology(static_cast<int>(world)).name())
            << fmt::format("rules     {}\n", restore.rules);
  if (outcomes.size() == 1 && outcomes.front().rows.empty()) {
    std::cout << "\nno communication: every rank already holds what it needs\n";
    return 0;
  }
  std::cout << "\nOne table per outcome: with the rules above (\"default\") and with \"*:NAME;*:direct\" for each\n"
               "algorithm NAME (direct where NAME does not offer or fit a collective).\n";
  for (const Outcome& outcome : outcomes)
    std::cout << fmt::format("\n-- {}\n", fmt::join(outcome.settings, ", ")) << outcome.table;
  const auto best = std::min_element(outcomes.begin(), outcomes.end(),
                                     [](const Outcome& a, const Outcome& b) { return a.seconds < b.seconds; });
  std::cout << fmt::format("\nfastest estimate: {} ({:.3f} us)\n", fmt::join(best->settings, ", "), best->seconds * 1e6);
  return 0;
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan", "Show what redistributing a DTensor costs: collectives, bytes and estimated time per algorithm");
  sub->footer(
      "The redistribution is really run in simulation, so the tensor is allocated on every rank: about\n"
      "(ranks + 1) x its size in memory.\n"
      "Example: tessera plan --mesh 4x2 --names dp,tp --shape 1024x1024 --from \"S(0),R\" --to \"R,S(1)\"");
  sub->add_option("--mesh", options->mesh, "Mesh shape, e.g. 4x2")->required()->type_name("SHAPE");
  sub->add_option("--shape", options->shape, "Global tensor shape, e.g. 1024x1024")->required()->type_name("SHAPE");
  sub->add_option("--from", options->from, "Placements now, one per mesh dim, e.g. \"S(0),R\" (S, B, R, P(op))")
      ->required()
      ->type_name("PLACEMENTS");
  sub->add_option("--to", options->to, "Placements wanted, e.g. \"R,S(1)\"")->required()->type_name("PLACEMENTS");
  sub->add_option("--topology", options->topology,
                  "Topology preset: fully_connected, ring, torus:RxC or nodes:K (default: the configured one)")
      ->type_name("PRESET");
  sub->add_option("--dtype", options->dtype, "Element type: float32, float64, int32 or int64")
      ->type_name("DTYPE")
      ->capture_default_str();
  sub->add_option("--names", options->names, "Mesh dim names, e.g. dp,tp")->type_name("NAMES");
  return {sub, [options] { return plan(*options); }};
}

}  // namespace tessera::cli
