// Module and optimizer state dicts through a checkpoint: trained with FSDP on 4 ranks, loaded into
// a tensor-parallel copy on 2 ranks (and into a plain one), optimizer state keyed by parameter
// name as PyTorch's flattened form; values checked against the dense values saved.
#include "checkpoint_test_support.hpp"

using ct::distinct;
using ct::ScratchDir;
namespace ts = tessera;
namespace nn = tessera::nn;
namespace dcp = tessera::dcp;

namespace {

class TwoLayerImpl : public nn::Module {
 public:
  TwoLayerImpl() : Module("TwoLayer") {
    up = register_module("up", nn::Linear(8, 12));
    down = register_module("down", nn::Linear(12, 8));
  }
  nn::Value forward(const nn::Value& x) {
    return run_forward(
        {x}, [this](const std::vector<nn::Value>& in) { return down(nn::functional::relu(up(in[0]))); });
  }
  nn::Linear up{nullptr}, down{nullptr};
};
TESSERA_MODULE(TwoLayer);

ts::Tensor dense_value(const dcp::StateValue& v) {
  const ts::NoGradGuard off;
  if (const auto* dt = std::get_if<ts::DTensor>(&v)) return ct::dense_of(*dt);
  return std::get<ts::Tensor>(v);
}

}  // namespace

TEST_CASE(
    "FSDP-trained model and AdamW state saved, then loaded into a tensor-parallel model and a fresh AdamW") {
  ScratchDir dir;
  std::map<std::string, ts::Tensor> saved_dense;  // every tensor entry's dense value
  {
    const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {4}, {"dp"});
    ts::manual_seed(5);
    TwoLayer net;
    ts::fully_shard(*net, {.mesh = dp});
    ts::optim::AdamW opt(net->parameters(), {.lr = 0.01});
    const ts::Tensor x = ts::distribute_tensor(distinct({8, 8}, -2) * 0.01, dp, {ts::Shard(0)}).to_local();
    net(x).tensor().mean().backward();
    opt.step();
    dcp::StateDict state = ts::get_model_state_dict(*net);
    CHECK(state.size() == 4);
    for (auto& [key, value] : ts::get_optimizer_state_dict(*net, opt)) state.emplace(key, value);
    // PyTorch's flattened keys, by parameter name.
    CHECK(state.count("state.up.weight.exp_avg") == 1);
    CHECK(state.count("state.down.bias.exp_avg_sq") == 1);
    CHECK(std::get<int64_t>(state.at("state.up.weight.step")) == 1);
    CHECK(std::get<double>(state.at("param_groups.lr")) == 0.01);
    CHECK(std::get<ts::DTensor>(state.at("state.up.weight.exp_avg")).placements() ==
          ts::Placements{ts::Shard(0)});
    for (const auto& [key, value] : state)
      if (std::holds_alternative<ts::DTensor>(value) || std::holds_alternative<ts::Tensor>(value))
        saved_dense[key] = dense_value(value);
    // The first moment after one step is (1 - beta1) * grad: not all zero.
    CHECK(ts::abs(saved_dense.at("state.up.weight.exp_avg")).sum().item<double>() > 0);
    dcp::save(state, dir.path());
  }
  const ts::DeviceMesh tp = ts::init_device_mesh("cpu", {2}, {"tp"});
  ts::manual_seed(99);  // other initial values, overwritten by the load
  TwoLayer net;
  ts::parallelize_module(*net, tp, {{"up", ts::ColwiseParallel{}}, {"down", ts::RowwiseParallel{}}});
  ts::optim::AdamW opt(net->parameters(), {.lr = 0.5});
  const ts::Tensor up_local_before = net->up->weight.dtensor().to_local();
  // The two dicts load from one checkpoint (their keys differ), as PyTorch's {"model", "optim"}.
  dcp::StateDict model_state = ts::get_model_state_dict(*net);
  dcp::StateDict optim_state = ts::get_optimizer_state_dict(*net, opt);
  CHECK(std::get<int64_t>(optim_state.at("state.up.weight.step")) == 0);
  dcp::load(model_state, dir.path());
  dcp::load(optim_state, dir.path());
  ts::set_model_state_dict(*net, model_state);
  ts::set_optimizer_state_dict(*net, opt, optim_state);
  // The model's own tensors were filled (in place), with the saved values.
  CHECK(net->up->weight.dtensor().to_local().shard(0).impl() == up_local_before.shard(0).impl());
  for (const auto& [name_bound, param] : net->named_parameters()) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    const ts::NoGradGuard off;
    ct::check_equal(param.is_dtensor() ? ct::dense_of(param.dtensor()) : param.tensor(), saved_dense.at(name),
                    name);
  }
  CHECK(opt.lr() == 0.01);
  const auto names = net->named_parameters();
  for (size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i].first);
    const ts::optim::Optimizer::ParamState s = opt.param_state(i);
    CHECK(std::get<int64_t>(s.at("step")) == 1);
    for (const char* field : {"exp_avg", "exp_avg_sq"}) {
      const ts::Tensor local = std::get<ts::Tensor>(s.at(field));
      const ts::DTensor* param = opt.dtensor_param(i);
      REQUIRE(param != nullptr);
      const ts::DTensor value(local, param->device_mesh(), param->placements(), param->shape());
      ct::check_equal(ct::dense_of(value), saved_dense.at("state." + names[i].first + "." + field), field);
    }
  }
}

TEST_CASE("optimizer state dict errors: a parameter the module lacks, unknown fields, mismatched tensors") {
  TwoLayer net;
  const ts::Tensor stray = ts::zeros({3}).requires_grad_();
  ts::optim::SGD sgd({stray}, {.lr = 0.1, .momentum = 0.9});
  CHECK_THROWS_WITH_AS(ts::get_optimizer_state_dict(*net, sgd),
                       doctest::Contains("SGD: parameter 0 (shape [3]) is not a parameter of the module"),
                       ts::Error);
  ts::optim::SGD opt(net->parameters(), {.lr = 0.1, .momentum = 0.9});
  dcp::StateDict state = ts::get_optimizer_state_dict(*net, opt);
  CHECK(state.count("state.up.weight.momentum_buffer") == 1);
  dcp::StateDict unknown = {{"state.up.weight.velocity", ts::zeros({12, 8})}};
  CHECK_THROWS_WITH_AS(
      ts::set_optimizer_state_dict(*net, opt, unknown),
      doctest::Contains("SGD: parameter 0 has no state field 'velocity'; with these options it keeps: "
                        "momentum_buffer"),
      ts::Error);
  dcp::StateDict wrong = {{"state.up.bias.momentum_buffer", ts::zeros({8})}};
  CHECK_THROWS_WITH_AS(
      ts::set_optimizer_state_dict(*net, opt, wrong),
      doctest::Contains("state field 'momentum_buffer' of parameter 1 is a float32 tensor of shape [8]; "
                        "expected one like the parameter: float32 of shape [12]"),
      ts::Error);
  dcp::StateDict stray_key = {{"state.nothing.momentum_buffer", ts::zeros({8})}};
  CHECK_THROWS_WITH_AS(ts::set_optimizer_state_dict(*net, opt, stray_key),
                       doctest::Contains("key 'state.nothing.momentum_buffer' names no state"), ts::Error);
}

TEST_CASE("a plain model round trip through get/set_model_state_dict, strict about missing keys") {
  ScratchDir dir;
  ts::manual_seed(1);
  TwoLayer a;
  dcp::save(ts::get_model_state_dict(*a), dir.path());
  ts::manual_seed(2);
  TwoLayer b;
  dcp::StateDict state = ts::get_model_state_dict(*b);
  dcp::load(state, dir.path());
  for (const auto& [name, param] : a->named_parameters())
    ct::check_equal(b->get_parameter(name).tensor(), param.tensor(), name);
  dcp::StateDict partial = {{"up.weight", ts::zeros({12, 8})}};
  CHECK_THROWS_AS(ts::set_model_state_dict(*b, partial), ts::Error);
  CHECK_NOTHROW(ts::set_model_state_dict(*b, partial, /*strict=*/false));
  CHECK(ts::abs(b->up->weight.tensor()).sum().item<double>() == 0);
}
