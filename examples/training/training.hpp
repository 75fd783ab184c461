// Training on several ranks, checked against a dense single-rank run of the same math.
// Every scenario trains the same kind of model on float32 data,
//
//   y = relu(x W1) W2,     loss = sum((y - target)^2) / (rows * outputs)   (mean squared error),
//
// with a ts::optim optimizer, and returns both runs step by step: the distributed one and the
// dense one (plain tensors, autograd, the same optimizer). The demo (main.cpp) prints them;
// tests/training checks them, and checks both against a hand-written oracle.
#pragma once

#include <cstdint>
#include <string>
#include <tessera/tessera.hpp>
#include <variant>
#include <vector>

namespace training {

namespace ts = tessera;

// How close a distributed run must be to the dense one: |distributed - dense| <= atol + rtol |dense|
// for every element of every gradient and parameter, and for the loss, at every step.
inline constexpr double kRtol = 1e-5;
inline constexpr double kAtol = 1e-6;

// A model and its data, as plain float32 tensors.
struct Problem {
  ts::Tensor w1, w2;                  // initial parameters: [in, hidden], [hidden, out]
  std::vector<ts::Tensor> x, target;  // one batch per step: [rows, in], [rows, out]
};
// Parameters ~ N(0, 1 / fan_in), inputs ~ N(0, 1), targets tanh(x A) for a fixed random A (a
// teacher the MLP can learn). The same seed gives the same problem.
Problem make_problem(int64_t in, int64_t hidden, int64_t out, int64_t rows, int steps, uint64_t seed);

using OptimizerOptions = std::variant<ts::optim::SGDOptions, ts::optim::AdamWOptions>;
std::string describe(const OptimizerOptions& options);

// One training step as a run saw it, in global values (plain float32 tensors).
struct Step {
  double loss = 0;
  std::vector<ts::Tensor> grads;   // dW1, dW2, then dx where the input requires grad
  std::vector<ts::Tensor> params;  // W1, W2 after the optimizer step
};

// The dense reference: the model, loss and optimizer on plain tensors with autograd.
std::vector<Step> dense_run(const Problem& problem, const OptimizerOptions& options, bool input_grad = false);

// How far apart two runs are over every element of every step.
struct Difference {
  double max_abs = 0;
  bool bitwise = true;  // every element has the same bits
  bool close = true;    // every element within kAtol + kRtol |dense|
};

// What one training step communicated, phase by phase, per (collective, mesh dim, algorithm).
struct Communication {
  std::vector<ts::CommCounter::Entry> forward;   // the model and the loss
  std::vector<ts::CommCounter::Entry> backward;  // loss.backward() (and data parallel's gradient sync)
  std::vector<ts::CommCounter::Entry> step;      // optimizer step (reduces gradients still pending)
};
// The calls of `collective` in `entries`, over `mesh_dim` ("" = any).
int64_t calls(const std::vector<ts::CommCounter::Entry>& entries, const std::string& collective = "",
              const std::string& mesh_dim = "");
// "all_reduce x2 over dp, reduce_scatter x1" (or "none").
std::string describe(const std::vector<ts::CommCounter::Entry>& entries);

struct Comparison {
  std::string name;   // "data parallel", ...
  std::string setup;  // ranks, mesh, placements, batch split
  // Why the bits can differ from the dense run's (or why they cannot).
  std::string reduction_order;
  Problem problem;
  OptimizerOptions options;
  bool input_grad = false;      // Step::grads ends with dx
  Communication communication;  // of the first step
  std::vector<Step> distributed, dense;
  Difference grads, params, loss;

  bool matches() const { return grads.close && params.close && loss.close; }
};

// Fills grads, params and loss of `c` from its two runs.
void compare_runs(Comparison& c);

// 1. Data parallel on local tensors: the batch split over rows_per_rank.size() ranks (uneven, empty
//    allowed), every rank a replica of the parameters; after backward each gradient is
//    all_reduce(AVG)'d explicitly, as DDP does; SGD with momentum.
Comparison data_parallel(const std::vector<int64_t>& rows_per_rank = {3, 5, 2, 4}, int steps = 3);
// 2. Megatron tensor parallel MLP on a 1-d mesh of tp ranks (DTensor): W1 Shard(1), W2 Shard(0),
//    the input Replicate and requiring grad (it comes from an earlier layer); SGD.
Comparison megatron_tp(int tp = 4, int steps = 2);
// 3. DP x TP on a (dp, tp) mesh (DTensor): x [S(0), R], W1 [R, S(1)], W2 [R, S(0)]; AdamW.
Comparison dp_tp(int dp = 2, int tp = 4, int steps = 2);
// 4. FSDP / ZeRO-3 on local tensors: every rank holds a Shard(0) block of each parameter and the
//    optimizer state of that block; parameters are all_gather_tensor'd before use, whose backward
//    reduce_scatters the gradients; AdamW on the blocks. Parameter rows are multiples of the world.
Comparison fsdp(const std::vector<int64_t>& rows_per_rank = {3, 1, 4, 2}, int steps = 3);
// 5. AdamW training a tiny MLP on synthetic mini-batches on a (dp, tp) mesh (DP x TP).
Comparison adamw_training(int dp = 2, int tp = 2, int steps = 8);

// The five scenarios with their default arguments, in order.
std::vector<Comparison> all_scenarios();

}  // namespace training
