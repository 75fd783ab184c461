// The pipelining example of docs/user-guide.md, as written there (with a batch and a target around it).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

TEST_CASE("pipelining: the user guide's example runs") {
  const ts::Tensor x = ts::rand({8, 8});
  const ts::Tensor target = ts::rand({8, 4});
  std::vector<size_t> loss_counts(2, 0);
  std::vector<int> grads_defined(2, 0);

  namespace pp = ts::pipelining;
  ts::spawn(2, [&](int rank) {
    ts::nn::Sequential chunk = rank == 0 ? ts::nn::Sequential(ts::nn::Linear(8, 16), ts::nn::ReLU())
                                         : ts::nn::Sequential(ts::nn::Linear(16, 4));
    pp::PipelineStage stage(chunk, /*stage_index=*/rank, /*num_stages=*/2);
    pp::Schedule1F1B schedule(stage, /*n_microbatches=*/4, [](const ts::Tensor& out, const ts::Tensor& y) {
      return ts::mse_loss(out, y);
    });
    std::vector<ts::Tensor> losses;
    if (rank == 0)
      schedule.step(x);  // splits x into 4 micro-batches along dim 0
    else
      schedule.step({}, target, &losses);  // one loss per micro-batch

    loss_counts[static_cast<size_t>(rank)] = losses.size();
    int defined = 0;
    for (const ts::nn::Parameter& p : chunk->parameters()) defined += p.tensor().grad().defined() ? 1 : 0;
    grads_defined[static_cast<size_t>(rank)] = defined;
  });
  CHECK(loss_counts == std::vector<size_t>{0, 4});
  CHECK(grads_defined == std::vector<int>{2, 2});  // weight and bias of each rank's Linear

  CHECK_FALSE(pp::Schedule1F1B::plan(2, 2).table().empty());
  CHECK(pp::ScheduleGPipe::plan(4, 8).bubble_fraction() == doctest::Approx(3.0 / 11.0));
}
