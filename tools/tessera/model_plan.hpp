// `tessera plan --model ...`: one training step of a model laid out over a mesh, planned by running
// it. Forward, backward and gradient synchronisation go through the ordinary DTensor ops (sharding
// propagation picks every collective), normally on the meta backend, where nothing is allocated or
// computed; each layer's collectives, bytes per rank and estimated time come from a CommCounter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::cli {

enum class ModelKind { Mlp, TransformerBlock };
// How weights and activations are laid out over the mesh (see model_plan.cpp for each).
enum class Strategy { Megatron, Fsdp, Dp };

struct ModelPlan {
  ModelKind model = ModelKind::Mlp;
  Strategy strategy = Strategy::Megatron;
  int64_t layers = 1;
  int64_t hidden = 0;
  int64_t ffn = 0;  // the MLP's inner width
  int64_t heads = 1;
  int64_t seq = 1;
  int64_t batch = 0;
  std::vector<int64_t> mesh_shape;  // one or two dims
  std::vector<std::string> names;   // one per mesh dim
  DType dtype = kFloat32;
  std::string backend = "meta";
  std::string topology;  // "" = the configured default
  std::string trace;     // a file for the step's schedule trace, or ""
  int64_t world = 1;
};

const char* model_name(ModelKind kind);
const char* strategy_name(Strategy strategy);

// Runs one step of `plan` and prints the per-layer table; returns the exit status.
int plan_model(const ModelPlan& plan);

}  // namespace tessera::cli
