// The arguments of `tessera plan`, parsed and checked without running anything: kept apart from the
// command so that they can be fuzzed (tests/fuzz/plan_arguments_fuzzer.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "model_plan.hpp"

namespace tessera::cli {

// The options as given on the command line.
struct PlanOptions {
  std::string mesh;
  std::string shape;
  std::string from;
  std::string to;
  std::string topology;  // "" = the configured default (fully connected unless configured)
  std::string dtype = "float32";
  std::string names;
  // The model form (`--model`); 0 and "" mean not given.
  std::string model;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t ffn = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t vocab = 0;
  int64_t seq = 0;
  int64_t batch = 0;
  std::string placements;
  std::string backend;
  std::string trace;
  // Pipeline parallelism of the transformer; 0 and "" mean not given.
  int64_t pp = 0;
  std::string schedule;
  int64_t microbatches = 0;
  int64_t stages_per_rank = 0;
  double tflops = 0;
};

// A plan that can be run: every option parsed and checked against the others.
struct PlanRequest {
  std::vector<int64_t> mesh_shape;
  std::vector<std::string> names;  // empty, or one per mesh dim
  std::vector<int64_t> shape;
  DType dtype = kFloat32;
  Placements from;
  Placements to;
  std::string topology;
  int64_t world = 1;
  int64_t bytes = 0;  // the global tensor's
};

// The simulation holds the tensor once and a shard of up to its size on every rank.
inline constexpr int64_t kPlanMaxRanks = 65536;
inline constexpr int64_t kPlanMaxMemory = int64_t{8} << 30;  // (ranks + 1) x tensor bytes
// A pipeline's schedule is simulated action by action.
inline constexpr int64_t kPlanMaxStageRanks = 256;
inline constexpr int64_t kPlanMaxMicrobatches = 1024;
inline constexpr int64_t kPlanMaxStageMicrobatches = 65536;  // stages x micro-batches

void add_plan_options(CLI::App& sub, PlanOptions& options);
// Every mistake is a UsageError naming the option, the value given and what was expected.
// check_plan takes the redistribution form (--shape, --from, --to), check_model_plan the model form.
PlanRequest check_plan(const PlanOptions& options);
ModelPlan check_model_plan(const PlanOptions& options);
// The options as `tessera plan ARGS...` would read ARGS (without "tessera plan"), not yet checked;
// the tool then takes the model form when options.model is given.
PlanOptions parse_plan_options(const std::vector<std::string>& args);
// The redistribution form, parsed and checked, stopping before the run.
PlanRequest parse_plan_arguments(const std::vector<std::string>& args);

}  // namespace tessera::cli
