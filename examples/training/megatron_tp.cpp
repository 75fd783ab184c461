// Scenario 2: Megatron's tensor-parallel MLP on a 1-d mesh. W1 is split by columns (column
// parallel), W2 by rows (row parallel): the hidden activation stays sharded, the output is Partial
// and one all_reduce (Megatron's g) makes it whole. In backward the one all_reduce (Megatron's f)
// is the input gradient of the column-parallel layer; the weights' gradients stay sharded.
#include "common.hpp"

namespace training {

Comparison megatron_tp(int tp, int steps) {
  Comparison c;
  c.name = "Megatron TP MLP";
  c.setup =
      "1-d mesh (tp=" + std::to_string(tp) + "), x [5,6] R requiring grad, W1 [6,8] S(1), W2 [8,3] S(0)";
  c.reduction_order =
      tp == 1 ? "one rank: the dense program, the same order"
              : "y sums W2's hidden contraction per rank, then across ranks (all_reduce); so does dx";
  c.problem = make_problem(6, 8, 3, 5, steps, 22);
  c.options = ts::optim::SGDOptions{.lr = 0.2, .momentum = 0.5};
  c.input_grad = true;
  c.dense = dense_run(c.problem, c.options, c.input_grad);

  ts::LocalMode mode(tp);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {tp}, {"tp"});
  ts::DTensor w1 = ts::distribute_tensor(c.problem.w1, mesh, {ts::Shard(1)}).set_requires_grad(true);
  ts::DTensor w2 = ts::distribute_tensor(c.problem.w2, mesh, {ts::Shard(0)}).set_requires_grad(true);
  const auto optimizer = detail::make_optimizer(std::vector<ts::DTensor>{w1, w2}, c.options);
  for (int s = 0; s < steps; ++s) {
    // The input enters replicated, as the output of an earlier layer would, and requires grad.
    ts::Tensor x_local = detail::on_every_rank(c.problem.x[s], mode.ranks()).set_requires_grad(true);
    const ts::DTensor x = ts::from_local(x_local, mesh, {ts::Replicate()});
    const ts::DTensor target = ts::distribute_tensor(c.problem.target[s], mesh, {ts::Replicate()});
    Communication communication;
    const ts::DTensor loss = detail::counted(communication.forward, [&] {
      const ts::DTensor partial = ts::matmul(ts::relu(ts::matmul(x, w1)), w2);  // Partial(sum) over tp
      const ts::DTensor y = partial.redistribute({ts::Replicate()});            // Megatron's g
      return detail::mse(y, target, y.size(0) * y.size(1));
    });
    detail::counted(communication.backward, [&] { loss.backward(); });
    detail::counted(communication.step, [&] { optimizer->step(); });
    if (s == 0) c.communication = communication;
    Step step;
    step.loss = detail::global(loss).item<double>();
    step.grads = {detail::global(w1.grad()), detail::global(w2.grad()),
                  detail::same_on_every_rank(x_local.grad())};
    step.params = {detail::global(w1), detail::global(w2)};
    optimizer->zero_grad();
    c.distributed.push_back(std::move(step));
  }
  compare_runs(c);
  return c;
}

}  // namespace training
