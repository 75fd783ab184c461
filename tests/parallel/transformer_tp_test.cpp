// The reference Transformer with torchtitan's tensor- and sequence-parallel plan and loss parallel:
// logits, loss and every parameter's gradient equal the dense model's, and one step communicates
// what PyTorch 2.15's CommDebugMode reports for the same plan on the same model (measured on a fake
// process group of 2 and 4 ranks: forward 5 all_gathers, 5 reduce_scatters and 3 all_reduces for
// two layers; backward 5 all_gathers and 5 reduce_scatters; the norm weights' gradients stay
// Partial).
#include "parallel_test_support.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;
using pt::by_collective;
using pt::check_close;
using pt::full_grad;
using pt::full_of;
using pt::text;
using Counts = std::map<std::string, int64_t>;

TEST_CASE("the Transformer under torchtitan's TP plan: dense values and gradients, PyTorch's collectives") {
  const ts::Tensor tokens =
      ts::from_values(std::vector<int64_t>{3, 7, 0, 10, 3, 5, 1, 9, 2, 4, 6, 8, 11, 0, 5, 2}, {2, 8});
  const ts::Tensor targets =
      ts::from_values(std::vector<int64_t>{7, 0, 10, 3, 5, 1, 9, 2, 4, 6, 8, 11, 0, 5, 2, 1}, {2, 8});
  for (int64_t tp : {1, 2, 4}) {
    CAPTURE(tp);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {tp}, {"tp"});
    ts::manual_seed(21);
    ts::models::Transformer dense(pt::small_llama_args());
    ts::manual_seed(21);
    ts::models::Transformer model(pt::small_llama_args());
    ts::parallelize_module(model, mesh, ts::transformer_tp_plan());

    const ts::Tensor dense_logits = dense(tokens).tensor();
    const ts::Tensor dense_loss = ts::cross_entropy(dense_logits.view({-1, 12}), targets.view({-1}));
    dense_loss.backward();

    ts::CommCounter forward;
    const nn::Value logits = model(tokens);
    REQUIRE(logits.is_dtensor());
    CHECK(logits.dtensor().placements() == ts::Placements{ts::Shard(2)});
    ts::LossParallel loss_parallel;
    const ts::DTensor target = ts::from_local(targets, mesh, {ts::Replicate()});
    const ts::DTensor loss = ts::cross_entropy(logits.dtensor().view({-1, 12}), target.view({-1}));
    const Counts forward_counts = by_collective(forward);
    const Counts expected_forward =
        tp > 1 ? Counts{{"all_gather", 5}, {"reduce_scatter", 5}, {"all_reduce", 3}} : Counts{};
    CHECK_MESSAGE(forward_counts == expected_forward, forward.table());
    ts::CommCounter backward;
    loss.backward();
    const Counts expected_backward = tp > 1 ? Counts{{"all_gather", 5}, {"reduce_scatter", 5}} : Counts{};
    CHECK_MESSAGE(by_collective(backward) == expected_backward, backward.table());

    check_close(full_of(logits), dense_logits, "logits");
    check_close(full_of(loss), dense_loss, "loss");
    const auto want = dense->named_parameters();
    const auto got = model->named_parameters();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(got[i].first);
      REQUIRE(got[i].second.is_dtensor());
      if (got[i].first.find("norm") != std::string::npos && tp > 1)
        CHECK(got[i].second.dtensor_grad().placements() == ts::Placements{ts::Partial()});
      check_close(full_grad(got[i].second), want[i].second.grad(), "gradient of " + got[i].first, 1e-4);
    }
  }
}
