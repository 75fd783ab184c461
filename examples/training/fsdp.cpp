// Scenario 4: FSDP / ZeRO-3 on local tensors. Every rank keeps only a Shard(0) block of each
// parameter (and the optimizer state of that block), all_gathers the whole parameter just before
// using it, and computes on its own rows of the batch. The gather's backward is a reduce_scatter:
// each rank receives the sum over ranks of the gradient of its block only, so backward runs one
// reduce_scatter per parameter and no all_reduce.
#include <numeric>

#include "common.hpp"

namespace training {

namespace fn = ts::dist::functional;

Comparison fsdp(const std::vector<int64_t>& rows_per_rank, int steps) {
  const int world = static_cast<int>(rows_per_rank.size());
  const int64_t rows = std::accumulate(rows_per_rank.begin(), rows_per_rank.end(), int64_t{0});
  // Parameter rows a multiple of the world, so that every block is the same size (as FSDP pads).
  const int64_t in = 2 * world, hidden = 3 * world, out = 3;
  Comparison c;
  c.name = "FSDP / ZeRO-3";
  std::string split;
  for (int64_t n : rows_per_rank) split += (split.empty() ? "" : "+") + std::to_string(n);
  c.setup = std::to_string(world) + " ranks (local tensors), batch rows " + split + ", W1 [" +
            std::to_string(in) + "," + std::to_string(hidden) + "] and W2 [" + std::to_string(hidden) +
            ",3] as Shard(0) blocks";
  c.reduction_order = world == 1 ? "one rank: the dense program, the same order"
                                 : "each rank sums its own rows and reduce_scatter adds the ranks' sums, "
                                   "where the dense matmul sums all rows at once";
  c.problem = make_problem(in, hidden, out, rows, steps, 44);
  c.options = ts::optim::AdamWOptions{.lr = 1e-2, .weight_decay = 1e-2};
  c.dense = dense_run(c.problem, c.options);

  ts::LocalMode mode(world);
  ts::Tensor w1 = detail::split_rows(c.problem.w1, detail::chunk_rows(in, world)).set_requires_grad(true);
  ts::Tensor w2 = detail::split_rows(c.problem.w2, detail::chunk_rows(hidden, world)).set_requires_grad(true);
  const auto optimizer = detail::make_optimizer(std::vector<ts::Tensor>{w1, w2}, c.options);
  const auto gathered = [](const ts::Tensor& t) {
    ts::NoGradGuard no_grad;
    return detail::same_on_every_rank(fn::all_gather_tensor(t, 0));
  };
  for (int s = 0; s < steps; ++s) {
    const ts::Tensor x = detail::split_rows(c.problem.x[s], rows_per_rank);
    const ts::Tensor target = detail::split_rows(c.problem.target[s], rows_per_rank);
    Communication communication;
    const ts::Tensor loss = detail::counted(communication.forward, [&] {
      const ts::Tensor full_w1 = fn::all_gather_tensor(w1, 0);
      const ts::Tensor full_w2 = fn::all_gather_tensor(w2, 0);
      const ts::Tensor y = ts::matmul(ts::relu(ts::matmul(x, full_w1)), full_w2);
      // Each rank's share of the global mean: the reduce_scatter of backward adds the shares up.
      return detail::mse(y, target, rows * out);
    });
    detail::counted(communication.backward, [&] { loss.backward(); });
    detail::counted(communication.step, [&] { optimizer->step(); });  // each rank updates its own block
    if (s == 0) c.communication = communication;
    Step step;
    {
      ts::NoGradGuard no_grad;
      step.loss = detail::same_on_every_rank(fn::all_reduce(loss, ts::ReduceOp::SUM)).item<double>();
    }
    step.grads = {gathered(w1.grad()), gathered(w2.grad())};
    step.params = {gathered(w1), gathered(w2)};
    optimizer->zero_grad();
    c.distributed.push_back(std::move(step));
  }
  compare_runs(c);
  return c;
}

}  // namespace training
