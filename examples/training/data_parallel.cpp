// Scenario 1: data parallelism as DDP does it, on local tensors. Every rank holds a replica of the
// parameters and its own rows of the batch; after backward each gradient is averaged over the
// ranks with one all_reduce(AVG), so every replica takes the same optimizer step.
#include <numeric>

#include "common.hpp"

namespace training {

Comparison data_parallel(const std::vector<int64_t>& rows_per_rank, int steps) {
  const int world = static_cast<int>(rows_per_rank.size());
  const int64_t rows = std::accumulate(rows_per_rank.begin(), rows_per_rank.end(), int64_t{0});
  Comparison c;
  c.name = "data parallel";
  std::string split;
  for (int64_t n : rows_per_rank) split += (split.empty() ? "" : "+") + std::to_string(n);
  c.setup = std::to_string(world) + " ranks (local tensors), batch rows " + split +
            ", replicated W1 [6,8], W2 [8,3], gradients all_reduce(AVG)'d after backward";
  c.reduction_order = world == 1 ? "one rank: the dense program, the same order"
                                 : "each rank sums its own rows and all_reduce adds the ranks' sums, where "
                                   "the dense matmul sums all rows at once";
  c.problem = make_problem(6, 8, 3, rows, steps, 11);
  c.options = ts::optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-3};
  c.dense = dense_run(c.problem, c.options);

  ts::LocalMode mode(world);
  ts::Tensor w1 = detail::on_every_rank(c.problem.w1, mode.ranks()).set_requires_grad(true);
  ts::Tensor w2 = detail::on_every_rank(c.problem.w2, mode.ranks()).set_requires_grad(true);
  const auto optimizer = detail::make_optimizer(std::vector<ts::Tensor>{w1, w2}, c.options);
  for (int s = 0; s < steps; ++s) {
    const ts::Tensor x = detail::split_rows(c.problem.x[s], rows_per_rank);
    const ts::Tensor target = detail::split_rows(c.problem.target[s], rows_per_rank);
    Communication communication;
    const ts::Tensor loss = detail::counted(communication.forward, [&] {
      const ts::Tensor y = ts::matmul(ts::relu(ts::matmul(x, w1)), w2);
      // Each rank's share of the global mean, times the world size: averaging the ranks' gradients
      // then gives the gradient of the mean over the whole batch, however unevenly it is split.
      return detail::mse(y, target, rows * c.problem.target[s].size(1)) * static_cast<double>(world);
    });
    detail::counted(communication.backward, [&] {
      loss.backward();
      ts::NoGradGuard no_grad;  // the gradient sync is not part of the model
      for (const ts::Tensor& w : {w1, w2}) {
        ts::Tensor grad = w.grad();  // the handle shares the gradient: all_reduce updates it in place
        ts::dist::all_reduce(grad, ts::ReduceOp::AVG);
      }
    });
    detail::counted(communication.step, [&] { optimizer->step(); });
    if (s == 0) c.communication = communication;
    Step step;
    {
      ts::NoGradGuard no_grad;
      step.loss = detail::same_on_every_rank(ts::dist::functional::all_reduce(loss, ts::ReduceOp::AVG))
                      .item<double>();
    }
    // same_on_every_rank also checks that the replicas stayed bitwise in sync.
    step.grads = {detail::same_on_every_rank(w1.grad()), detail::same_on_every_rank(w2.grad())};
    step.params = {detail::same_on_every_rank(w1), detail::same_on_every_rank(w2)};
    optimizer->zero_grad();
    c.distributed.push_back(std::move(step));
  }
  compare_runs(c);
  return c;
}

}  // namespace training
