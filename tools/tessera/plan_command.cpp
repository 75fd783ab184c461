// tessera plan --mesh 4x2 --shape 1024x1024 --from "S(0),R" --to "R,S(1)": what redistributing a
// DTensor costs. The redistribution is really run (in a LocalMode over the mesh) under a
// CommCounter, once with the collective rules in force and once per loaded algorithm, so the
// steps, bytes and estimated times shown are exactly what a program would issue.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <tessera/tessera.hpp>

#include "commands.hpp"
#include "plan_arguments.hpp"

namespace tessera::cli {
namespace {

int64_t largest_shard_bytes(const Tensor& local) {
  int64_t most = 0;
  for (const auto& [rank, shard] : local.shards())
    most = std::max(most, shard.numel() * static_cast<int64_t>(itemsize(shard.dtype())));
  return most;
}

// Restores process-wide settings the plan changes, also when it ends by an exception.
struct RestoreSettings {
  std::string rules = dist::algorithms();
  std::string topology = default_topology_preset();
  ~RestoreSettings() {
    try {
      dist::set_algorithms(rules);
      set_default_topology(topology);
    } catch (const std::exception&) {  // both were valid when saved; nothing useful to report
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

int plan(const PlanRequest& request) {
  const std::vector<int64_t>& mesh_shape = request.mesh_shape;
  const std::vector<int64_t>& shape = request.shape;
  const std::vector<std::string>& names = request.names;
  const DType dtype = request.dtype;
  const Placements& from = request.from;
  const Placements& to = request.to;
  const int64_t world = request.world;
  const int64_t bytes = request.bytes;

  RestoreSettings restore;
  if (!request.topology.empty()) set_default_topology(request.topology);

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
    auto same = std::find_if(outcomes.begin(), outcomes.end(),
                             [&](const Outcome& o) { return same_rows(o.rows, rows); });
    if (same != outcomes.end()) {
      same->settings.push_back(label);
      continue;
    }
    outcomes.push_back({{label}, std::move(rows), counter.table(), counter.seconds()});
  }

  // Printed only now, so that a redistribution that is not possible prints just the error.
  std::cout << fmt::format("mesh      [{}] ({} ranks{})\n", fmt::join(mesh_shape, ", "), world,
                           names.empty() ? "" : fmt::format("; dims {}", fmt::join(names, ", ")))
            << fmt::format(
                   "tensor    {} [{}], {}\n", dtype_name(dtype), fmt::join(shape, ", "),
                   bytes < 1024 ? bytes_text(bytes) : fmt::format("{} bytes ({})", bytes, bytes_text(bytes)))
            << fmt::format("from      {}  (largest shard {})\n", placements_text(from),
                           bytes_text(largest_shard_bytes(source.to_local())))
            << fmt::format("to        {}  (largest shard {})\n", placements_text(to),
                           bytes_text(target_bytes))
            << fmt::format("topology  {}\n", default_topology(static_cast<int>(world)).name())
            << fmt::format("rules     {}\n", restore.rules);
  if (outcomes.size() == 1 && outcomes.front().rows.empty()) {
    std::cout << "\nno communication: every rank already holds what it needs\n";
    return 0;
  }
  std::cout
      << "\nOne table per outcome: with the rules above (\"default\") and with \"*:NAME;*:direct\" for each\n"
         "algorithm NAME (direct where NAME does not offer or fit a collective).\n";
  for (const Outcome& outcome : outcomes)
    std::cout << fmt::format("\n-- {}\n", fmt::join(outcome.settings, ", ")) << outcome.table;
  const auto best =
      std::min_element(outcomes.begin(), outcomes.end(),
                       [](const Outcome& a, const Outcome& b) { return a.seconds < b.seconds; });
  std::cout << fmt::format("\nfastest estimate: {} ({:.3f} us)\n", fmt::join(best->settings, ", "),
                           best->seconds * 1e6);
  return 0;
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Show what redistributing a DTensor costs: collectives, bytes and estimated time per algorithm");
  sub->footer(
      "The redistribution is really run in simulation, so the tensor is allocated on every rank: about\n"
      "(ranks + 1) x its size in memory, which may be at most 8 GiB.\n"
      "Example: tessera plan --mesh 4x2 --names dp,tp --shape 1024x1024 --from \"S(0),R\" --to \"R,S(1)\"\n"
      "With --model, one training step of a model is planned instead, on the meta backend (shapes only):\n"
      "  tessera plan --model mlp --layers 8 --hidden 16384 --batch 1024 --mesh 32x32 --placements megatron\n"
      "--model transformer is the reference Llama (ts::models::Transformer) laid out as a training program\n"
      "does: fsdp+tp on a 2-d mesh (dp x tp), megatron, fsdp or dp on a 1-d one:\n"
      "  tessera plan --model transformer --layers 32 --hidden 4096 --heads 32 --kv-heads 8 --seq 2048 \\\n"
      "      --batch 256 --mesh 128x8 --dtype bfloat16");
  add_plan_options(*sub, *options);
  return {sub, [options] {
            return options->model.empty() ? plan(check_plan(*options))
                                          : plan_model(check_model_plan(*options));
          }};
}

}  // namespace tessera::cli
