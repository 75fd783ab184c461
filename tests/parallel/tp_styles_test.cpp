// The tensor- and sequence-parallel styles: each module parallelized on 1 to 7 ranks computes the
// dense module's values and parameter gradients, and communicates what the style promises.
#include "parallel_test_support.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;
namespace F = tessera::nn::functional;
using pt::by_collective;
using pt::check_close;
using pt::distinct_tensor;
using pt::full_grad;
using pt::full_of;
using pt::text;
using Counts = std::map<std::string, int64_t>;

namespace {

constexpr int64_t B = 2, S = 12, D = 12, H = 24;

class MlpImpl : public nn::Module {
 public:
  MlpImpl() : Module("Mlp") {
    w1 = register_module("w1", nn::Linear(D, H));
    w2 = register_module("w2", nn::Linear(H, D));
  }
  nn::Value forward(const nn::Value& x) {
    return run_forward({x}, [this](const std::vector<nn::Value>& in) { return w2(F::relu(w1(in[0]))); });
  }
  nn::Linear w1{nullptr}, w2{nullptr};
};
TESSERA_MODULE(Mlp);

// A sequence-parallel block: norm, then the MLP on the gathered sequence, back to a sequence shard.
class BlockImpl : public nn::Module {
 public:
  BlockImpl() : Module("Block") {
    norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({D})));
    mlp = register_module("mlp", Mlp());
  }
  nn::Value forward(const nn::Value& x) {
    return run_forward({x}, [this](const std::vector<nn::Value>& in) { return in[0] + mlp(norm(in[0])); });
  }
  nn::LayerNorm norm{nullptr};
  Mlp mlp{nullptr};
};
TESSERA_MODULE(Block);

std::vector<ts::DeviceMesh> tp_meshes() {
  return {ts::init_device_mesh("cpu", {1}, {"tp"}), ts::init_device_mesh("cpu", {3}, {"tp"}),
          ts::init_device_mesh("cpu", {4}, {"tp"})};
}

// What a mesh of more than one rank issues; one rank communicates nothing.
Counts on_many_ranks(const ts::DeviceMesh& mesh, Counts counts) {
  return mesh.size() > 1 ? std::move(counts) : Counts{};
}

void check_grads(nn::Module& parallel, nn::Module& dense) {
  const auto want = dense.named_parameters();
  const auto got = parallel.named_parameters();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE_MESSAGE(got[i].second.has_grad(), got[i].first);
    check_close(full_grad(got[i].second), want[i].second.grad(), "gradient of " + got[i].first);
  }
}

}  // namespace

TEST_CASE(
    "ColwiseParallel then RowwiseParallel: the dense MLP's values and gradients, one all_reduce forward") {
  for (const ts::DeviceMesh& mesh : tp_meshes()) {
    CAPTURE(mesh.to_string());
    ts::manual_seed(3);
    Mlp dense;
    ts::manual_seed(3);
    Mlp mlp;
    ts::parallelize_module(mlp, mesh, {{"w1", ts::ColwiseParallel{}}, {"w2", ts::RowwiseParallel{}}});
    CHECK(mlp->w1->weight.dtensor().placements() == ts::Placements{ts::Shard(0)});
    CHECK(mlp->w1->bias.dtensor().placements() == ts::Placements{ts::Shard(0)});
    CHECK(mlp->w2->weight.dtensor().placements() == ts::Placements{ts::Shard(1)});
    CHECK(mlp->w2->bias.dtensor().placements() == ts::Placements{ts::Replicate()});

    const ts::Tensor x = distinct_tensor({B, S, D}, 1);
    const ts::Tensor seed = distinct_tensor({B, S, D}, 2);
    const ts::Tensor want = dense(x).tensor();
    want.backward(seed);

    ts::CommCounter forward;
    const nn::Value out = mlp(x);
    const Counts expected_forward = on_many_ranks(mesh, {{"all_reduce", 1}});
    CHECK_MESSAGE(by_collective(forward) == expected_forward, forward.table());
    REQUIRE_FALSE(out.is_dtensor());  // use_local_output
    check_close(full_of(out), want, "output");
    ts::CommCounter backward;
    out.tensor().backward(seed);
    CHECK_MESSAGE(by_collective(backward).empty(), text(by_collective(backward)));
    check_grads(*mlp, *dense);
  }
}

TEST_CASE("on an uneven split (7 ranks for 24 and 12 features) the styles still compute the dense MLP") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {7}, {"tp"});
  ts::manual_seed(4);
  Mlp dense;
  ts::manual_seed(4);
  Mlp mlp;
  // The hidden activation stays a DTensor: a local tensor of uneven shards cannot be wrapped again
  // without its global shape (as PyTorch's from_local).
  ts::parallelize_module(mlp, mesh,
                         {{"w1", ts::ColwiseParallel{.use_local_output = false}},
                          {"w2", ts::RowwiseParallel{.use_local_output = false}}});
  const ts::Tensor x = distinct_tensor({3, D}, 5);
  const ts::Tensor want = dense(x).tensor();
  want.sum().backward();
  const nn::Value out = mlp(x);
  REQUIRE(out.is_dtensor());
  CHECK(out.dtensor().placements() == ts::Placements{ts::Replicate()});
  check_close(full_of(out), want, "output");
  out.dtensor().sum().backward();
  check_grads(*mlp, *dense);
}

TEST_CASE(
    "SequenceParallel and PrepareModuleInput: a sequence-parallel block gathers once and scatters once") {
  for (const ts::DeviceMesh& mesh : tp_meshes()) {
    CAPTURE(mesh.to_string());
    ts::manual_seed(8);
    Block dense;
    ts::manual_seed(8);
    Block block;
    ts::parallelize_module(block, mesh,
                           {{"norm", ts::SequenceParallel{}},
                            {"mlp", ts::PrepareModuleInput{{ts::Shard(1)}, {ts::Replicate()}}},
                            {"mlp.w1", ts::ColwiseParallel{}},
                            {"mlp.w2", ts::RowwiseParallel{.output_layouts = ts::Shard(1)}}});
    CHECK(block->norm->weight.dtensor().placements() == ts::Placements{ts::Replicate()});

    const ts::Tensor x_full = distinct_tensor({B, S, D}, 3);
    const ts::Tensor seed_full = distinct_tensor({B, S, D}, 4);
    ts::Tensor x_dense = x_full.clone().requires_grad_();
    const ts::Tensor want = dense(x_dense).tensor();
    want.backward(seed_full);

    // Each rank holds its slice of the sequence, as the layer before would leave it.
    ts::Tensor x = ts::distribute_tensor(x_full, mesh, {ts::Shard(1)}).to_local().detach().requires_grad_();
    const ts::Tensor seed = ts::distribute_tensor(seed_full, mesh, {ts::Shard(1)}).to_local();
    ts::CommCounter forward;
    const nn::Value out = block(x);
    const Counts gather_scatter = on_many_ranks(mesh, {{"all_gather", 1}, {"reduce_scatter", 1}});
    CHECK_MESSAGE(by_collective(forward) == gather_scatter, text(by_collective(forward)));
    REQUIRE_FALSE(out.is_dtensor());
    check_close(ts::from_local(out.tensor(), mesh, {ts::Shard(1)}).full_tensor().reconcile(), want, "output");
    ts::CommCounter backward;
    out.tensor().backward(seed);
    CHECK_MESSAGE(by_collective(backward) == gather_scatter, text(by_collective(backward)));
    check_grads(*block, *dense);
    check_close(ts::from_local(x.grad(), mesh, {ts::Shard(1)}).full_tensor().reconcile(), x_dense.grad(),
                "input gradient");
  }
}

TEST_CASE(
    "RowwiseParallel on an Embedding is vocabulary parallel: masked lookups summed into a sequence shard") {
  for (const ts::DeviceMesh& mesh : tp_meshes()) {
    CAPTURE(mesh.to_string());
    ts::manual_seed(9);
    nn::Embedding dense(10, D);
    ts::manual_seed(9);
    nn::Embedding embedding(10, D);
    ts::parallelize_module(
        embedding, mesh,
        ts::RowwiseParallel{
            .input_layouts = ts::Replicate(), .output_layouts = ts::Shard(1), .use_local_output = false});
    CHECK(embedding->weight.dtensor().placements() == ts::Placements{ts::Shard(0)});
    const ts::Tensor tokens =
        ts::from_values(std::vector<int64_t>{0, 9, 3, 3, 5, 1, 8, 2, 7, 4, 6, 0}, {2, 6});
    const ts::Tensor want = dense(tokens).tensor();
    const ts::Tensor seed = distinct_tensor({2, 6, D}, 6);
    want.backward(seed);
    ts::CommCounter forward;
    const nn::Value out = embedding(tokens);
    const Counts expected_forward = on_many_ranks(mesh, {{"reduce_scatter", 1}});
    CHECK_MESSAGE(by_collective(forward) == expected_forward, forward.table());
    CHECK(out.dtensor().placements() == ts::Placements{ts::Shard(1)});
    check_close(full_of(out), want, "output");
    out.dtensor().backward(ts::distribute_tensor(seed, mesh, {ts::Shard(1)}));
    check_close(full_grad(embedding->weight), dense->weight.grad(), "weight gradient");
  }
}

TEST_CASE("ColwiseParallel on an Embedding shards the embedding dim") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3}, {"tp"});
  ts::manual_seed(10);
  nn::Embedding dense(5, 6);
  ts::manual_seed(10);
  nn::Embedding embedding(5, 6);
  ts::parallelize_module(embedding, mesh, ts::ColwiseParallel{.use_local_output = false});
  CHECK(embedding->weight.dtensor().placements() == ts::Placements{ts::Shard(1)});
  const ts::Tensor tokens = ts::from_values(std::vector<int64_t>{4, 0, 2}, {3});
  const nn::Value out = embedding(tokens);
  CHECK(out.dtensor().placements() == ts::Placements{ts::Shard(1)});
  check_close(full_of(out), dense(tokens).tensor(), "output");
}

TEST_CASE("PrepareModuleOutput lays out a module's local output") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4}, {"tp"});
  ts::manual_seed(12);
  nn::Sequential dense(nn::Linear(D, 8));
  ts::manual_seed(12);
  nn::Sequential seq(nn::Linear(D, 8));
  ts::parallelize_module(seq, mesh, {{"0", ts::ColwiseParallel{}}});  // a local tensor out: Shard(-1)
  ts::parallelize_module(seq, mesh,
                         ts::PrepareModuleOutput{.output_layouts = ts::Shard(-1),
                                                 .desired_output_layouts = ts::Replicate(),
                                                 .use_local_output = false});
  const ts::Tensor x = distinct_tensor({5, D}, 7);
  ts::CommCounter counter;
  const nn::Value out = seq(x);
  CHECK(by_collective(counter) == Counts{{"all_gather", 1}});
  REQUIRE(out.is_dtensor());
  CHECK(out.dtensor().placements() == ts::Placements{ts::Replicate()});
  check_close(full_of(out), dense(x).tensor(), "output");
}

TEST_CASE("parallelize_module refuses bad plans with the key, the style and what was expected") {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2}, {"tp"});
  Block block;
  CHECK_THROWS_WITH_AS(ts::parallelize_module(block, mesh, {{"mlp.w9", ts::ColwiseParallel{}}}),
                       doctest::Contains("the plan key 'mlp.w9' (ColwiseParallel) matches no submodule"),
                       ts::Error);
  CHECK_FALSE(block->mlp->w1->weight.is_dtensor());
  CHECK_THROWS_WITH_AS(
      ts::parallelize_module(block, mesh, {{"norm", ts::ColwiseParallel{}}}),
      doctest::Contains("the module is a LayerNorm; this style applies to Linear and Embedding"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::parallelize_module(block, ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"}),
                                              {{"mlp.w1", ts::ColwiseParallel{}}}),
                       doctest::Contains("parallel styles need a 1-d mesh"), ts::Error);
  CHECK_THROWS_WITH_AS(
      ts::parallelize_module(
          block, mesh, {{"mlp", ts::PrepareModuleInput{{ts::Shard(1), ts::Shard(0)}, {ts::Replicate()}}}}),
      doctest::Contains("input_layouts has 2 entries but desired_input_layouts has 1"), ts::Error);
  ts::parallelize_module(block, mesh, {{"mlp.w1", ts::ColwiseParallel{}}});
  CHECK_THROWS_WITH_AS(ts::parallelize_module(block, mesh, {{"mlp.w1", ts::ColwiseParallel{}}}),
                       doctest::Contains("the parameter is already a DTensor"), ts::Error);
  // A wildcard reaches every matching module.
  nn::ModuleList list;
  for (int i = 0; i < 3; ++i) list->push_back(Mlp());
  ts::parallelize_module(list, mesh, {{"*.w1", ts::ColwiseParallel{}}});
  for (int i = 0; i < 3; ++i) CHECK(list->at<MlpImpl>(i)->w1->weight.is_dtensor());
  CHECK_FALSE(list->at<MlpImpl>(0)->w2->weight.is_dtensor());
}
