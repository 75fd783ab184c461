// fully_shard and replicate on the meta backend (shapes only): every rank's shards and gradients
// have the shapes the same program gives on the cpu backend, uneven splits included (there FSDP
// packs once per distinct shard shape and shares the result between ranks), and the step issues
// the same collectives.
#include "parallel_test_support.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;
namespace F = tessera::nn::functional;
using pt::by_collective;
using Counts = std::map<std::string, int64_t>;

namespace {

nn::Linear meta_test_linear(int64_t in, int64_t out, const std::string& backend) {
  return nn::Linear(nn::LinearOptions(in, out).backend(backend));
}

// Two layers whose dims split unevenly over 3 and 4 ranks (5 rows: 2, 2, 1 and 2, 2, 1, 0).
using MetaPair = pt::UpDown;

class MetaNetImpl : public nn::Module {
 public:
  explicit MetaNetImpl(const std::string& backend) : Module("MetaNet") {
    pair = register_module("pair", MetaPair(8, 5, backend));
    head = register_module("head", meta_test_linear(8, 3, backend));
  }
  nn::Value forward(const nn::Value& x) {
    return run_forward({x}, [this](const std::vector<nn::Value>& in) { return head(pair(in[0])); });
  }
  MetaPair pair{nullptr};
  nn::Linear head{nullptr};
};
TESSERA_MODULE(MetaNet);

// What a step leaves on each rank: per parameter, the shapes of its shard and of its gradient.
struct StepShapes {
  std::vector<std::vector<ts::Shape>> shards, grads;
  Counts forward, backward;
};

StepShapes fsdp_step(const std::string& backend, int64_t n) {
  const ts::DeviceMesh dp = ts::init_device_mesh(backend, {n}, {"dp"});
  MetaNet net(backend);
  ts::fully_shard(net->pair, {.mesh = dp});
  ts::fully_shard(net, {.mesh = dp});
  const ts::Tensor x = ts::zeros({2 * n, 8}, ts::TensorOptions().backend(backend));
  const ts::Tensor x_local = ts::distribute_tensor(x, dp, {ts::Shard(0)}).to_local();
  StepShapes out;
  nn::Value y;
  {
    const ts::CommCounter forward;
    y = net(x_local);
    out.forward = by_collective(forward);
  }
  {
    const ts::CommCounter backward;
    y.tensor().sum().backward();
    out.backward = by_collective(backward);
  }
  for (const auto& [name, p] : net->named_parameters()) {
    std::vector<ts::Shape> shard, grad;
    for (int r = 0; r < n; ++r) {
      shard.push_back(p.dtensor().to_local().shard(r).sizes());
      grad.push_back(p.dtensor_grad().to_local().shard(r).sizes());
    }
    out.shards.push_back(shard);
    out.grads.push_back(grad);
  }
  return out;
}

}  // namespace

TEST_CASE("fully_shard on the meta backend: every rank's shard and gradient shapes as on cpu") {
  for (int64_t n : {3, 4}) {
    CAPTURE(n);
    const StepShapes meta = fsdp_step("meta", n);
    const StepShapes cpu = fsdp_step("cpu", n);
    CHECK(meta.shards == cpu.shards);
    CHECK(meta.grads == cpu.grads);
    CHECK(meta.grads == meta.shards);
    // up.weight [5, 8] in chunks of 2 rows: the last rank of 3 holds 1, of 4 holds none.
    REQUIRE(meta.grads.size() == 6);
    CHECK(meta.grads[0][2] == ts::Shape{1, 8});
    if (n == 4) CHECK(meta.grads[0][3] == ts::Shape{0, 8});
    const Counts forward{{"all_gather", 2}};
    CHECK(meta.forward == forward);
    CHECK(meta.forward == cpu.forward);
    CHECK(meta.backward == cpu.backward);
    CHECK(meta.backward.at("reduce_scatter") == 2);
  }
}

TEST_CASE("replicate on the meta backend: one all_reduce and one plain gradient per parameter") {
  const ts::DeviceMesh dp = ts::init_device_mesh("meta", {3}, {"dp"});
  MetaNet net("meta");
  ts::replicate(net, {.mesh = dp});
  const ts::Tensor x_local =
      ts::distribute_tensor(ts::zeros({6, 8}, ts::TensorOptions().backend("meta")), dp, {ts::Shard(0)})
          .to_local();
  const ts::CommCounter step;
  net(x_local).tensor().sum().backward();
  const Counts one_all_reduce{{"all_reduce", 1}};
  CHECK(by_collective(step) == one_all_reduce);
  for (const auto& [name_bound, p] : net->named_parameters()) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    REQUIRE(p.grad().defined());
    CHECK_FALSE(p.grad().is_local());
    CHECK(p.grad().sizes() == p.tensor().sizes());
  }
}
