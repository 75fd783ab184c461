// fully_shard under micro-batching (a pipeline stage's pattern): several forwards whose backwards
// run later, one by one, in any order. Each backward reduce-scatters its own forward's gradients
// into the sharded parameters, so the accumulated gradients equal the dense model's summed over
// the micro-batches, and the root (which keeps its parameters gathered from forward to backward)
// gathers values of its own for each recorded forward.
#include "parallel_test_support.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;
using pt::by_collective;
using pt::check_close;
using pt::distinct_tensor;
using pt::full_grad;
using Counts = std::map<std::string, int64_t>;

namespace {

class StackImpl : public nn::Module {
 public:
  StackImpl() : Module("Stack") {
    block = register_module("block", pt::UpDown(8, 16));
    head = register_module("head", nn::Linear(8, 5));
  }
  nn::Value forward(const nn::Value& x) {
    return run_forward({x}, [this](const std::vector<nn::Value>& in) { return head(block(in[0])); });
  }
  pt::UpDown block{nullptr};
  nn::Linear head{nullptr};
};
TESSERA_MODULE(Stack);

}  // namespace

TEST_CASE(
    "fully_shard: forwards of three micro-batches, then their backwards in any order, sum the gradients") {
  for (const bool reshard : {true, false}) {
    for (const std::vector<int>& order : {std::vector<int>{0, 1, 2}, std::vector<int>{2, 0, 1}}) {
      CAPTURE(reshard);
      CAPTURE(order[0]);
      ts::LocalMode mode(2);
      const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {2}, {"dp"});
      // Both made as plain modules, from one seed.
      const auto [dense, net] = [] {
        const ts::DisabledLocalMode plain;
        ts::manual_seed(5);
        Stack d;
        ts::manual_seed(5);
        Stack n;
        return std::pair{d, n};
      }();
      ts::fully_shard(net->block, {.mesh = dp, .reshard_after_forward = reshard});
      ts::fully_shard(net, {.mesh = dp});

      // Micro-batch k: 2 rows per rank; the dense model sees both ranks' rows (the mean over dp).
      std::vector<ts::Tensor> losses;
      ts::CommCounter forwards;
      for (int k = 0; k < 3; ++k) {
        const ts::Tensor x = [&] {
          const ts::DisabledLocalMode plain;
          return distinct_tensor({4, 8}, 1 + k);
        }();
        {
          const ts::DisabledLocalMode plain;
          dense(x).tensor().mean().backward();  // accumulates over the micro-batches
        }
        const ts::Tensor x_local = ts::distribute_tensor(x, dp, {ts::Shard(0)}).to_local();
        losses.push_back(net(x_local).tensor().mean());
      }
      // Each forward gathers both groups once: the root again for every forward, its earlier values
      // being held for their own backwards.
      const Counts gathered{{"all_gather", 6}};
      CHECK_MESSAGE(by_collective(forwards) == gathered, forwards.table());
      ts::CommCounter backwards;
      for (int k : order) losses[static_cast<size_t>(k)].backward();
      // Every backward reduces both groups; the block gathers again when resharded after forward.
      const Counts expected =
          reshard ? Counts{{"all_gather", 3}, {"reduce_scatter", 6}} : Counts{{"reduce_scatter", 6}};
      CHECK_MESSAGE(by_collective(backwards) == expected, backwards.table());
      const auto want = dense->named_parameters();
      const auto got = net->named_parameters();
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        CAPTURE(got[i].first);
        REQUIRE(got[i].second.is_dtensor());  // every slot holds its shard again after the last backward
        check_close(full_grad(got[i].second), want[i].second.grad(), "gradient");
      }
    }
  }
}
