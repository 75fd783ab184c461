#include "plan_arguments.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "commands.hpp"

namespace tessera::cli {
namespace {

const char* const kCommand = "tessera plan";

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
    return UsageError(kCommand,
                      fmt::format("{} '{}': {}; expected sizes separated by 'x', e.g. 4x2", option, text, why));
  };
  for (const std::string& part : split(text, 'x')) {
    // At most 12 digits, so the value fits an int64_t before any arithmetic on it.
    if (part.empty() || part.size() > 12 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
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
  throw UsageError(kCommand, fmt::format("--dtype '{}': expected float32, float64, int32 or int64", text));
}

// Placement text checked against the mesh and shape, so mistakes are named in the user's terms.
Placements parse_for(const std::string& option, const std::string& text, size_t mesh_dims, size_t tensor_dims) {
  Placements placements;
  try {
    placements = parse_placements(text);
  } catch (const Error& e) {
    throw UsageError(kCommand, fmt::format("{} '{}': {}", option, text, e.what()));
  }
  if (placements.size() != mesh_dims)
    throw UsageError(kCommand, fmt::format("{} '{}' gives {} placement(s) but the mesh has {} dim(s); give one per "
                                           "mesh dim",
                                           option, text, placements.size(), mesh_dims));
  for (const Placement& p : placements) {
    const auto n = static_cast<int64_t>(tensor_dims);
    if (p.is_shard() && (p.dim() < -n || p.dim() >= n))
      throw UsageError(kCommand, fmt::format("{} '{}': {} shards tensor dim {} but the shape has {} dim(s)", option,
                                             text, p.to_string(), p.dim(), n));
  }
  return placements;
}

}  // namespace

void add_plan_options(CLI::App& sub, PlanOptions& options) {
  sub.add_option("--mesh", options.mesh, "Mesh shape, e.g. 4x2")->required()->type_name("SHAPE");
  sub.add_option("--shape", options.shape, "Global tensor shape, e.g. 1024x1024")->required()->type_name("SHAPE");
  sub.add_option("--from", options.from, "Placements now, one per mesh dim, e.g. \"S(0),R\" (S, B, R, P(op))")
      ->required()
      ->type_name("PLACEMENTS");
  sub.add_option("--to", options.to, "Placements wanted, e.g. \"R,S(1)\"")->required()->type_name("PLACEMENTS");
  sub.add_option("--topology", options.topology,
                 "Topology preset: fully_connected, ring, torus:RxC or nodes:K (default: the configured one)")
      ->type_name("PRESET");
  sub.add_option("--dtype", options.dtype, "Element type: float32, float64, int32 or int64")
      ->type_name("DTYPE")
      ->capture_default_str();
  sub.add_option("--names", options.names, "Mesh dim names, e.g. dp,tp")->type_name("NAMES");
}

PlanRequest check_plan(const PlanOptions& options) {
  PlanRequest request;
  request.mesh_shape = parse_sizes("--mesh", options.mesh, 1);
  request.shape = parse_sizes("--shape", options.shape, 0);
  request.dtype = parse_dtype(options.dtype);
  if (!options.names.empty()) request.names = split(options.names, ',');
  if (!request.names.empty() && request.names.size() != request.mesh_shape.size())
    throw UsageError(kCommand, fmt::format("--names '{}' gives {} name(s) but the mesh has {} dim(s)", options.names,
                                           request.names.size(), request.mesh_shape.size()));

  for (int64_t size : request.mesh_shape)
    if ((request.world *= size) > kPlanMaxRanks)
      throw UsageError(kCommand, fmt::format("--mesh '{}': more than {} ranks", options.mesh, kPlanMaxRanks));
  // Bounded before anything is allocated: every step keeps (ranks + 1) x bytes within the limit.
  const int64_t budget = kPlanMaxMemory / (request.world + 1);
  request.bytes = static_cast<int64_t>(itemsize(request.dtype));
  for (int64_t size : request.shape) {
    if (size != 0 && request.bytes > budget / size)
      throw UsageError(kCommand, fmt::format("--shape '{}': too large to simulate on {} ranks: every rank may hold "
                                             "a copy, and (ranks + 1) x the tensor must stay within {} GiB",
                                             options.shape, request.world, kPlanMaxMemory >> 30));
    request.bytes *= size;
  }

  request.from = parse_for("--from", options.from, request.mesh_shape.size(), request.shape.size());
  request.to = parse_for("--to", options.to, request.mesh_shape.size(), request.shape.size());
  request.topology = options.topology;
  if (!request.topology.empty()) {
    // Checked against this world: set_default_topology alone only checks the preset's form.
    try {
      Topology::preset(request.topology, static_cast<int>(request.world));
    } catch (const Error& e) {
      throw UsageError(kCommand, fmt::format("--topology: {}", e.what()));
    }
  }
  return request;
}

PlanRequest parse_plan_arguments(const std::vector<std::string>& args) {
  CLI::App app("plan", "plan");
  PlanOptions options;
  add_plan_options(app, options);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError(kCommand, e.what());
  }
  return check_plan(options);
}

}  // namespace tessera::cli
