// FSDP on the dp dim of a (dp, tp) mesh after torchtitan's tensor-parallel plan, with loss
// parallel: every parameter becomes a DTensor on the 2-d mesh, the step's loss and gradients equal
// the dense model's on the whole batch, and the step communicates what PyTorch 2.15's FSDP2 + TP
// does for the same model on a fake process group of 4 ranks: forward 8 all_gathers (3 for FSDP),
// 5 reduce_scatters, 3 all_reduces; backward 7 all_gathers (2 for FSDP), 8 reduce_scatters (3 for
// FSDP) and 5 all_reduces (the norm weights' Partial gradients made Replicate over tp before FSDP
// reduces them).
#include "parallel_test_support.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;
using pt::by_collective;
using pt::check_close;
using pt::full_grad;
using pt::full_of;
using Counts = std::map<std::string, int64_t>;

TEST_CASE("FSDP + TP + SP + loss parallel on (dp=2, tp=2): dense loss and gradients, PyTorch's collectives") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  const ts::Tensor tokens =
      ts::from_values(std::vector<int64_t>{3, 7, 0, 10, 3, 5, 1, 9, 2, 4, 6,  8, 11, 0,  5, 2,
                                           1, 1, 4, 7,  9, 3, 0, 6, 8, 2, 10, 5, 4,  11, 7, 1},
                      {4, 8});
  const ts::Tensor targets =
      ts::from_values(std::vector<int64_t>{7, 0, 10, 3, 5, 1, 9, 2, 4, 6,  8, 11, 0,  5, 2, 1,
                                           1, 4, 7,  9, 3, 0, 6, 8, 2, 10, 5, 4,  11, 7, 1, 3},
                      {4, 8});
  ts::manual_seed(21);
  ts::models::Transformer dense(pt::small_llama_args());
  const ts::Tensor dense_loss = ts::cross_entropy(dense(tokens).tensor().view({-1, 12}), targets.view({-1}));
  dense_loss.backward();

  ts::manual_seed(21);
  ts::models::Transformer model(pt::small_llama_args());
  ts::parallelize_module(model, mesh["tp"], ts::transformer_tp_plan());
  for (const auto& layer : *model->layers) ts::fully_shard(*layer, {.mesh = mesh["dp"]});
  ts::fully_shard(model, {.mesh = mesh["dp"]});
  for (const auto& [name_bound, p] : model->named_parameters()) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    REQUIRE(p.is_dtensor());
    CHECK(p.dtensor().device_mesh().shape() == std::vector<int64_t>{2, 2});
  }
  CHECK(model->get_parameter("layers.0.attention.wo.weight").dtensor().placements() ==
        ts::Placements{ts::Shard(0), ts::Shard(1)});
  CHECK(model->get_parameter("layers.0.attention.wq.weight").dtensor().placements() ==
        ts::Placements{ts::Shard(1), ts::Shard(0)});
  CHECK(model->get_parameter("norm.weight").dtensor().placements() ==
        ts::Placements{ts::Shard(0), ts::Replicate()});

  // Each dp rank takes its two sequences; both tp ranks of a dp group see the same ones.
  const ts::Tensor my_tokens =
      ts::distribute_tensor(tokens, mesh, {ts::Shard(0), ts::Replicate()}).to_local();
  const ts::Tensor my_targets =
      ts::distribute_tensor(targets, mesh, {ts::Shard(0), ts::Replicate()}).to_local();
  ts::CommCounter forward;
  const nn::Value logits = model(my_tokens);
  ts::LossParallel loss_parallel;
  const ts::DTensor target = ts::from_local(my_targets, mesh["tp"], {ts::Replicate()});
  const ts::DTensor loss = ts::cross_entropy(logits.dtensor().view({-1, 12}), target.view({-1}));
  const Counts expected_forward{{"all_gather", 8}, {"reduce_scatter", 5}, {"all_reduce", 3}};
  CHECK_MESSAGE(by_collective(forward) == expected_forward, forward.table());
  ts::CommCounter backward;
  loss.backward();
  const Counts expected_backward{{"all_gather", 7}, {"reduce_scatter", 8}, {"all_reduce", 5}};
  CHECK_MESSAGE(by_collective(backward) == expected_backward, backward.table());

  // The dp groups' losses average to the dense loss (equal token counts).
  const ts::Tensor& losses = loss.to_local();
  check_close(((losses.shard(0) + losses.shard(2)) * 0.5), dense_loss, "mean loss over dp");
  const auto want = dense->named_parameters();
  const auto got = model->named_parameters();
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(got[i].first);
    CHECK(got[i].second.dtensor_grad().placements() == got[i].second.dtensor().placements());
    check_close(full_grad(got[i].second), want[i].second.grad(), "gradient", 1e-4);
  }
}

// A column-parallel bias is 1-d and tensor parallelism shards its only dim: FSDP shards each
// tensor-parallel block over dp (a strided shard, as PyTorch). Rank (i, j) holds chunk i of block
// j; gathering over dp gives back block j, and the step equals the dense one.
TEST_CASE("FSDP + TP: a column-parallel bias is sharded within its tensor-parallel blocks") {
  const std::vector<std::pair<int64_t, int64_t>> layouts{{2, 2}, {3, 2}, {2, 4}, {1, 2}};
  for (const auto& [dp_bound, tp_bound] : layouts) {
    const auto& dp = dp_bound;  // named again: clang 14 cannot capture a structured binding
    const auto& tp = tp_bound;
    CAPTURE(dp);
    CAPTURE(tp);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {dp, tp}, {"dp", "tp"});
    ts::manual_seed(5);
    pt::UpDown dense(6, 8);
    ts::manual_seed(5);
    pt::UpDown net(6, 8);
    ts::parallelize_module(net, mesh["tp"], {{"up", ts::ColwiseParallel{}}, {"down", ts::RowwiseParallel{}}});
    ts::fully_shard(net, {.mesh = mesh["dp"]});

    const ts::DTensor bias = net->up->bias.dtensor();
    CHECK(bias.placements() == ts::Placements{ts::StridedShard(0, tp), ts::Shard(0)});
    const std::vector<float> full = pt::values_of(dense->up->bias.tensor());
    const int64_t block = 8 / tp, chunk = (block + dp - 1) / dp;
    for (int64_t i = 0; i < dp; ++i)
      for (int64_t j = 0; j < tp; ++j) {
        const int64_t begin = std::min(block, i * chunk), end = std::min(block, (i + 1) * chunk);
        const std::vector<float> want(full.begin() + j * block + begin, full.begin() + j * block + end);
        CHECK(pt::values_of(bias.to_local().shard(static_cast<int>(i * tp + j))) == want);
      }
    check_close(bias.full_tensor().reconcile(), dense->up->bias.tensor(), "the bias, gathered whole");

    // Two rows per dp rank; each rank's loss is the sum of its rows' outputs, and FSDP averages
    // the gradients over dp: the dense loss is the total over dp.
    const ts::Tensor x = pt::distinct_tensor({2 * dp, 6}, 3);
    const ts::Tensor want = dense(x).tensor();
    (want.sum() / static_cast<double>(dp)).backward();
    const nn::Value out = net(ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()}).to_local());
    check_close(ts::from_local(out.tensor(), mesh, {ts::Shard(0), ts::Replicate()}).full_tensor().reconcile(),
                want, "output");
    out.tensor().sum().backward();
    const auto want_params = dense->named_parameters();
    const auto got = net->named_parameters();
    REQUIRE(got.size() == want_params.size());
    for (size_t k = 0; k < got.size(); ++k) {
      CAPTURE(got[k].first);
      check_close(full_grad(got[k].second), want_params[k].second.grad(), "gradient");
    }
  }
}

TEST_CASE("FSDP + TP refuses a 1-d parameter whose tensor-parallel blocks differ in length") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 3}, {"dp", "tp"});
  pt::UpDown net(6, 8);  // the bias's 8 elements over 3 tensor-parallel ranks: 3, 3, 2
  ts::parallelize_module(net, mesh["tp"], {{"up", ts::ColwiseParallel{}}, {"down", ts::RowwiseParallel{}}});
  CHECK_THROWS_WITH(ts::fully_shard(net, {.mesh = mesh["dp"]}),
                    doctest::Contains("'up.bias' has shape [8], sharded over 3 tensor-parallel ranks"));
}
