// nn::Module: dotted parameter names, state dicts (strict and not), training mode, casts, hooks,
// holders, and the built-in modules' forward against loops written here.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;

namespace {

// A two-level module: a Linear, a Sequential of two Linears, and a parameter of its own.
class NetImpl : public nn::Module {
 public:
  NetImpl() : Module("Net") {
    scale = register_parameter("scale", ts::ones({3}));
    first = register_module("first", nn::Linear(2, 3));
    body = register_module("body",
                           nn::Sequential(nn::Linear(3, 4), nn::Linear(nn::LinearOptions(4, 3).bias(false))));
    register_buffer("count", ts::zeros({1}));
  }
  nn::Value forward(const nn::Value& x) {
    return run_forward({x}, [this](const std::vector<nn::Value>& in) { return body(first(in[0])) * scale; });
  }
  nn::Parameter scale;
  nn::Linear first{nullptr};
  nn::Sequential body{nullptr};
};
TESSERA_MODULE(Net);

std::vector<std::string> names_of(const std::vector<std::pair<std::string, nn::Parameter>>& named) {
  std::vector<std::string> out;
  for (const auto& [name, p] : named) out.push_back(name);
  return out;
}

std::vector<float> values(const ts::Tensor& t) { return t.contiguous().to(ts::kFloat32).to_vector<float>(); }

}  // namespace

TEST_CASE("named_parameters lists dotted names in registration order") {
  Net net;
  const std::vector<std::string> expected = {"scale",         "first.weight", "first.bias",
                                             "body.0.weight", "body.0.bias",  "body.1.weight"};
  CHECK(names_of(net->named_parameters()) == expected);
  CHECK(net->parameters().size() == 6);
  CHECK(names_of(net->named_parameters(/*recurse=*/false)) == std::vector<std::string>{"scale"});
  std::vector<std::string> modules;
  for (auto& [name, m] : net->named_modules()) modules.push_back(name + ":" + m->name());
  CHECK(modules == std::vector<std::string>{":Net", "first:Linear", "body:Sequential", "body.0:Linear",
                                            "body.1:Linear"});
  CHECK(net->get_submodule("body.1")->name() == "Linear");
  CHECK(net->get_parameter("body.0.bias").shape() == ts::Shape{4});
  CHECK_THROWS_WITH_AS(net->get_submodule("body.7"), doctest::Contains("no submodule named 'body.7'"),
                       ts::Error);
  for (const nn::Parameter& p : net->parameters()) CHECK(p.requires_grad());
}

TEST_CASE("a parameter shared by two modules (tied weights) is listed once") {
  nn::Linear a(3, 3);
  nn::Sequential seq(a, nn::Linear(3, 3));
  seq->register_module("again", a);  // the same Linear under a second name
  const auto named = seq->named_parameters();
  CHECK(names_of(named) == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"});
}

TEST_CASE("registration refuses empty, dotted and repeated names and undefined parameters") {
  nn::Module m("M");
  m.register_parameter("w", ts::ones({2}));
  CHECK_THROWS_WITH_AS(m.register_parameter("w", ts::ones({2})),
                       doctest::Contains("'w' is already a parameter"), ts::Error);
  CHECK_THROWS_WITH_AS(m.register_buffer("w", ts::ones({2})), doctest::Contains("'w' is already a parameter"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(m.register_parameter("a.b", ts::ones({2})), doctest::Contains("contains '.'"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(m.register_parameter("", ts::ones({2})), doctest::Contains("the name is empty"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(m.register_parameter("i", ts::ones({2}, ts::kInt64)),
                       doctest::Contains("only floating-point parameters can require gradients"), ts::Error);
  CHECK_NOTHROW(m.register_parameter("i", ts::ones({2}, ts::kInt64), /*requires_grad=*/false));
  nn::Linear empty(nullptr);
  CHECK(empty.is_empty());
  CHECK_THROWS_WITH_AS(empty->forward(ts::ones({1, 1})), doctest::Contains("the holder is empty"), ts::Error);
}

TEST_CASE("holders share one module, and a Parameter's copies share its slot") {
  nn::Linear a(2, 2);
  nn::Linear b = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is under test
  CHECK(a.ptr() == b.ptr());
  nn::Parameter w = a->weight;
  w.set(ts::zeros({2, 2}));
  CHECK(values(b->weight.tensor()) == std::vector<float>{0, 0, 0, 0});
  CHECK(a->parameters()[0].same_slot(w));
  CHECK_THROWS_WITH_AS(w.dtensor(), doctest::Contains("is a Tensor, not a DTensor"), ts::Error);
}

TEST_CASE("load_state_dict copies in place, and strict names every missing and unexpected key") {
  ts::manual_seed(1);
  Net source;
  ts::manual_seed(2);
  Net target;
  const nn::StateDict state = source->state_dict();
  CHECK(state.keys() == std::vector<std::string>{"scale", "first.weight", "first.bias", "body.0.weight",
                                                 "body.0.bias", "body.1.weight", "count"});
  const void* bytes_before = target->first->weight.tensor().data_ptr();
  const auto result = target->load_state_dict(state);
  CHECK(result.missing_keys.empty());
  CHECK(result.unexpected_keys.empty());
  CHECK(target->first->weight.tensor().data_ptr() == bytes_before);
  for (const auto& [key, value] : state) {
    const std::string& name = key;  // named again: clang 14 cannot capture a structured binding
    CHECK_MESSAGE(values(target->state_dict().at(name).tensor()) == values(value.tensor()), name);
  }
  CHECK(target->first->weight.requires_grad());
  CHECK(target->first->weight.is_leaf());

  // A dict with one key renamed: strict refuses it before copying anything.
  nn::StateDict renamed;
  for (const auto& [name, value] : source->state_dict())
    renamed.insert(name == "first.bias" ? "first.b" : name, value);
  ts::manual_seed(3);
  Net third;
  const std::vector<float> before = values(third->scale.tensor());
  third->scale.tensor().detach().fill_(5.0);
  CHECK_THROWS_WITH_AS(third->load_state_dict(renamed),
                       doctest::Contains("missing keys 'first.bias'; unexpected keys 'first.b'"), ts::Error);
  CHECK(values(third->scale.tensor()) == std::vector<float>{5, 5, 5});
  const auto loose = third->load_state_dict(renamed, /*strict=*/false);
  CHECK(loose.missing_keys == std::vector<std::string>{"first.bias"});
  CHECK(loose.unexpected_keys == std::vector<std::string>{"first.b"});
  CHECK(values(third->scale.tensor()) == values(source->scale.tensor()));

  // A wrong shape is named and nothing is copied.
  nn::StateDict wrong;
  for (const auto& [name, value] : source->state_dict())
    wrong.insert(name, name == "body.0.bias" ? nn::Value(ts::zeros({5})) : value);
  ts::manual_seed(4);
  Net fourth;
  const std::vector<float> scale_before = values(fourth->scale.tensor());
  CHECK_THROWS_WITH_AS(
      fourth->load_state_dict(wrong),
      doctest::Contains("'body.0.bias' has shape [5] in the state dict but [4] in the module"), ts::Error);
  CHECK(values(fourth->scale.tensor()) == scale_before);
}

TEST_CASE("train and eval reach every submodule, and Dropout is the identity in eval mode") {
  nn::Sequential seq(nn::Linear(4, 4), nn::Dropout(0.5));
  CHECK(seq->is_training());
  seq->eval();
  for (const auto& m : seq->modules()) CHECK_FALSE(m->is_training());
  const ts::Tensor x = ts::rand({3, 4});
  const ts::Tensor y = seq(x).tensor();
  const ts::Tensor z = seq(x).tensor();
  CHECK(values(y) == values(z));
  seq->train();
  nn::Dropout drop(0.5);
  const std::vector<float> dropped = values(drop(ts::ones({1000})).tensor());
  int zeros = 0;
  for (float v : dropped) {
    CHECK((v == 0.0f || v == 2.0f));
    zeros += v == 0.0f;
  }
  CHECK(zeros > 400);
  CHECK(zeros < 600);
  CHECK_THROWS_WITH_AS(nn::Dropout(1.5), doctest::Contains("p=1.5 must be in [0, 1]"), ts::Error);
}

TEST_CASE("zero_grad clears every parameter's gradient") {
  Net net;
  const ts::Tensor out = net(ts::rand({2, 2})).tensor().sum();
  out.backward();
  for (const nn::Parameter& p : net->parameters()) CHECK(p.has_grad());
  net->zero_grad();
  for (const nn::Parameter& p : net->parameters()) CHECK_FALSE(p.has_grad());
}

TEST_CASE("to(dtype) casts parameters and buffers, and handles taken before see the cast and stay leaves") {
  Net net;
  nn::Parameter w = net->first->weight;
  const std::vector<float> before = values(w.tensor());
  net->to(ts::kBFloat16);
  CHECK(w.dtype() == ts::kBFloat16);
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  const std::vector<float> after = values(w.tensor());
  for (size_t i = 0; i < before.size(); ++i) CHECK(after[i] == doctest::Approx(before[i]).epsilon(1.0 / 128));
  CHECK(net->named_buffers()[0].second.dtype() == ts::kBFloat16);
  CHECK_THROWS_WITH_AS(net->to(ts::kInt64), doctest::Contains("not a floating-point dtype"), ts::Error);
}

TEST_CASE("apply visits children before their parent") {
  Net net;
  std::vector<std::string> order;
  net->apply([&](nn::Module& m) { order.push_back(m.name()); });
  CHECK(order == std::vector<std::string>{"Linear", "Linear", "Linear", "Sequential", "Net"});
}

TEST_CASE("forward hooks replace inputs and outputs, in registration order, and can be removed") {
  nn::Linear lin(2, 1);
  lin->weight.set(ts::tensor({{1.0f, 10.0f}}).requires_grad_());
  lin->bias.set(ts::tensor({0.5f}).requires_grad_());
  const int64_t doubling = lin->register_forward_pre_hook(
      [](nn::Module&, std::vector<nn::Value>& in) { in[0] = in[0].tensor() * 2.0; });
  lin->register_forward_hook(
      [](nn::Module&, const std::vector<nn::Value>&, nn::Value& out) { out = out.tensor() + 100.0; });
  const ts::Tensor x = ts::tensor({{1.0f, 2.0f}});
  CHECK(values(lin(x).tensor()) == std::vector<float>{142.5f});  // (2 + 40) + 0.5 + 100
  lin->remove_hook(doubling);
  CHECK(values(lin(x).tensor()) == std::vector<float>{121.5f});
  CHECK_THROWS_WITH_AS(lin->remove_hook(doubling), doctest::Contains("no hook with id"), ts::Error);
}

TEST_CASE("Linear computes x W^T + b as a loop does, and starts within PyTorch's bounds") {
  ts::manual_seed(7);
  nn::Linear lin(5, 3);
  const std::vector<float> w = values(lin->weight.tensor());
  const std::vector<float> b = values(lin->bias.tensor());
  const float bound = 1.0f / std::sqrt(5.0f);
  for (float v : w) CHECK(std::abs(v) <= bound);
  for (float v : b) CHECK(std::abs(v) <= bound);
  CHECK(w[0] != w[1]);
  std::vector<float> xs(2 * 5);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.25f * static_cast<float>(i) - 1.0f;
  const ts::Tensor x = ts::from_values(xs, {2, 5});
  const std::vector<float> y = values(lin(x).tensor());
  for (int r = 0; r < 2; ++r)
    for (int o = 0; o < 3; ++o) {
      double expected = b[o];
      for (int i = 0; i < 5; ++i) expected += static_cast<double>(xs[r * 5 + i]) * w[o * 5 + i];
      CHECK(y[r * 3 + o] == doctest::Approx(expected).epsilon(1e-6));
    }
  CHECK(lin->extra_repr() == "in_features=5, out_features=3, bias=true");
}

TEST_CASE("LayerNorm, RMSNorm and Embedding compute what loops compute") {
  const std::vector<float> xs = {1, 2, 4, 8, -1, 0.5f, 3, -2};
  const ts::Tensor x = ts::from_values(xs, {2, 4});
  nn::LayerNorm ln(nn::LayerNormOptions({4}));
  nn::RMSNorm rms(nn::RMSNormOptions({4}).eps(1e-6));
  ln->weight.set(ts::tensor({1.0f, 2.0f, 3.0f, 4.0f}).requires_grad_());
  const std::vector<float> y_ln = values(ln(x).tensor());
  const std::vector<float> y_rms = values(rms(x).tensor());
  for (int r = 0; r < 2; ++r) {
    double mean = 0, sq = 0;
    for (int i = 0; i < 4; ++i) mean += xs[r * 4 + i] / 4.0;
    double var = 0;
    for (int i = 0; i < 4; ++i) {
      var += (xs[r * 4 + i] - mean) * (xs[r * 4 + i] - mean) / 4.0;
      sq += xs[r * 4 + i] * xs[r * 4 + i] / 4.0;
    }
    for (int i = 0; i < 4; ++i) {
      CHECK(y_ln[r * 4 + i] ==
            doctest::Approx((xs[r * 4 + i] - mean) / std::sqrt(var + 1e-5) * (i + 1)).epsilon(1e-5));
      CHECK(y_rms[r * 4 + i] == doctest::Approx(xs[r * 4 + i] / std::sqrt(sq + 1e-6)).epsilon(1e-5));
    }
  }
  nn::Embedding emb(5, 3);
  const std::vector<float> table = values(emb->weight.tensor());
  const std::vector<float> rows = values(emb(ts::tensor({4, 0, 4})).tensor());
  CHECK(rows == std::vector<float>{table[12], table[13], table[14], table[0], table[1], table[2], table[12],
                                   table[13], table[14]});
}

TEST_CASE("ModuleList indexes its modules and names them by position") {
  nn::ModuleList list;
  list->push_back(nn::Linear(1, 2));
  list->push_back(nn::LayerNorm(nn::LayerNormOptions({2})));
  CHECK(list->size() == 2);
  CHECK(list->at<nn::LinearImpl>(0)->options.out_features() == 2);
  CHECK_THROWS_WITH_AS(list->at<nn::LinearImpl>(1), doctest::Contains("module 1 is a LayerNorm"), ts::Error);
  CHECK_THROWS_WITH_AS((*list)[2], doctest::Contains("index 2 is out of range for a list of 2 modules"),
                       ts::Error);
  CHECK(names_of(list->named_parameters()) ==
        std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"});
}

TEST_CASE("nn::functional holds the transformer ops for Tensors, DTensors and Values") {
  namespace Fn = ts::nn::functional;
  const ts::Tensor x = ts::tensor({{-2.0f, 0.5f}, {3.0f, 4.0f}});
  CHECK(values(Fn::clamp(x, -1.0, 1.0)) == std::vector<float>{-1, 0.5f, 1, 1});
  CHECK(values(Fn::tril(x)) == std::vector<float>{-2, 0, 3, 4});
  CHECK(values(Fn::cumsum(x, 1)) == std::vector<float>{-2, -1.5f, 3, 7});
  CHECK(values(Fn::relu(nn::Value(x)).tensor()) == std::vector<float>{0, 0.5f, 3, 4});
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2}, {"tp"});
  const ts::DTensor d = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  CHECK(values(Fn::triu(d).full_tensor().reconcile()) == std::vector<float>{-2, 0.5f, 0, 4});
  CHECK(values(Fn::relu(nn::Value(d)).dtensor().full_tensor().reconcile()) ==
        std::vector<float>{0, 0.5f, 3, 4});
  CHECK_THROWS_WITH_AS(Fn::linear(nn::Value(x), nn::Value(d)),
                       doctest::Contains("x is a Tensor but the weight is a DTensor(S(0))"), ts::Error);
}
