// Scenarios 3 and 5: data x tensor parallelism on a 2-d (dp, tp) mesh with DTensors. The batch is
// split over dp, the weights Megatron-style over tp and replicated over dp. Each weight's gradient
// comes back from backward Partial over dp (each dp rank's contribution from its own rows), as in
// PyTorch, and the optimizer step reduces it, once per weight; over tp nothing is reduced in
// backward, since the input needs no gradient.
#include <utility>

#include "common.hpp"

namespace training {

namespace {

std::vector<Step> run_on_mesh(Comparison& c, int dp, int tp) {
  ts::LocalMode mode(dp * tp);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {dp, tp}, {"dp", "tp"});
  ts::DTensor w1 =
      ts::distribute_tensor(c.problem.w1, mesh, {ts::Replicate(), ts::Shard(1)}).set_requires_grad(true);
  ts::DTensor w2 =
      ts::distribute_tensor(c.problem.w2, mesh, {ts::Replicate(), ts::Shard(0)}).set_requires_grad(true);
  const auto optimizer = detail::make_optimizer(std::vector<ts::DTensor>{w1, w2}, c.options);
  std::vector<Step> steps;
  for (size_t s = 0; s < c.problem.x.size(); ++s) {
    const ts::DTensor x = ts::distribute_tensor(c.problem.x[s], mesh, {ts::Shard(0), ts::Replicate()});
    const ts::DTensor target =
        ts::distribute_tensor(c.problem.target[s], mesh, {ts::Shard(0), ts::Replicate()});
    Communication communication;
    const ts::DTensor loss = detail::counted(communication.forward, [&] {
      const ts::DTensor y =
          ts::matmul(ts::relu(ts::matmul(x, w1)), w2).redistribute({ts::Shard(0), ts::Replicate()});
      return detail::mse(y, target, y.size(0) * y.size(1));  // Partial over dp
    });
    detail::counted(communication.backward, [&] { loss.backward(); });
    detail::counted(communication.step, [&] { optimizer->step(); });
    if (s == 0) c.communication = communication;
    Step step;
    step.loss = detail::global(loss).item<double>();
    step.grads = {detail::global(w1.grad()), detail::global(w2.grad())};
    step.params = {detail::global(w1), detail::global(w2)};
    optimizer->zero_grad();
    steps.push_back(std::move(step));
  }
  return steps;
}

std::string mesh_text(int dp, int tp) {
  return "(" + std::to_string(dp) + "," + std::to_string(tp) + ") mesh (dp, tp)";
}

std::string order_text(int dp, int tp) {
  if (dp * tp == 1) return "one rank: the dense program, the same order";
  std::string text;
  if (dp > 1) text = "each dp rank sums its own rows and all_reduce adds the ranks' sums";
  if (tp > 1)
    text += std::string(text.empty() ? "" : "; ") +
            "y sums W2's hidden contraction per tp rank, then across ranks";
  return text;
}

// The dense run and the same problem on the (dp, tp) mesh, compared step by step.
Comparison run_and_compare(Comparison c, int dp, int tp) {
  c.dense = dense_run(c.problem, c.options);
  c.distributed = run_on_mesh(c, dp, tp);
  compare_runs(c);
  return c;
}

}  // namespace

Comparison dp_tp(int dp, int tp, int steps) {
  Comparison c;
  c.name = "DP x TP";
  c.setup = mesh_text(dp, tp) + ", x [7,6] [S(0),R], W1 [6,8] [R,S(1)], W2 [8,3] [R,S(0)]";
  c.reduction_order = order_text(dp, tp);
  c.problem = make_problem(6, 8, 3, 7, steps, 33);
  c.options = ts::optim::AdamWOptions{.lr = 1e-2, .weight_decay = 1e-2};
  return run_and_compare(std::move(c), dp, tp);
}

Comparison adamw_training(int dp, int tp, int steps) {
  Comparison c;
  c.name = "AdamW training";
  c.setup = mesh_text(dp, tp) +
            ", a fresh batch x [31,4] [S(0),R] per step, W1 [4,16] [R,S(1)], W2 [16,2] [R,S(0)]";
  c.reduction_order = order_text(dp, tp);
  c.problem = make_problem(4, 16, 2, 31, steps, 5);
  c.options = ts::optim::AdamWOptions{.lr = 3e-2, .weight_decay = 1e-2};
  return run_and_compare(std::move(c), dp, tp);
}

}  // namespace training
