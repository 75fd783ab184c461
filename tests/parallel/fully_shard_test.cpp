// fully_shard (FSDP2): parameters sharded over the data-parallel ranks, gathered around forward,
// gradients reduce-scattered and averaged; values and gradients equal the dense model's on the
// whole batch, and one step communicates what PyTorch 2.15's FSDP2 does for the same model (on a
// fake process group: forward 3 all_gathers; backward 2 all_gathers and 3 reduce_scatters, the
// root keeping its parameters unsharded between forward and backward).
#include "parallel_test_support.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;
namespace F = tessera::nn::functional;
using pt::by_collective;
using pt::check_close;
using pt::distinct_tensor;
using pt::full_grad;
using Counts = std::map<std::string, int64_t>;

namespace {

using FsdpBlock = pt::UpDown;

class FsdpNetImpl : public nn::Module {
 public:
  FsdpNetImpl() : Module("FsdpNet") {
    b0 = register_module("b0", FsdpBlock(8, 16));
    b1 = register_module("b1", FsdpBlock(8, 16));
    head = register_module("head", nn::Linear(8, 5));
  }
  nn::Value forward(const nn::Value& x) {
    return run_forward({x}, [this](const std::vector<nn::Value>& in) { return head(b1(b0(in[0]) + in[0])); });
  }
  FsdpBlock b0{nullptr}, b1{nullptr};
  nn::Linear head{nullptr};
};
TESSERA_MODULE(FsdpNet);

FsdpNet sharded_net(const ts::DeviceMesh& dp, bool reshard = true) {
  ts::manual_seed(31);
  FsdpNet net;
  ts::fully_shard(net->b0, {.mesh = dp, .reshard_after_forward = reshard});
  ts::fully_shard(net->b1, {.mesh = dp, .reshard_after_forward = reshard});
  ts::fully_shard(net, {.mesh = dp});
  return net;
}

}  // namespace

TEST_CASE(
    "fully_shard: each rank holds its rows of every parameter, and forward+backward equal the dense model") {
  for (int64_t n : {1, 2, 3, 4}) {
    CAPTURE(n);
    const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {n}, {"dp"});
    ts::manual_seed(31);
    FsdpNet dense;
    FsdpNet net = sharded_net(dp);
    // Dim 0 split in chunks of ceil(16 / n) rows: on 3 ranks 6, 6 and 4; the head's 5 rows on 4
    // ranks 2, 2, 1 and none.
    const ts::DTensor w = net->b0->up->weight.dtensor();
    CHECK(w.placements() == ts::Placements{ts::Shard(0)});
    const int64_t chunk = (16 + n - 1) / n;
    for (int r = 0; r < n; ++r)
      CHECK(w.to_local().shard(r).size(0) == std::clamp<int64_t>(16 - r * chunk, 0, chunk));
    CHECK(net->head->weight.dtensor().to_local().shard(static_cast<int>(n - 1)).size(0) ==
          (n == 4 ? 0 : 5 - (n - 1) * ((5 + n - 1) / n)));

    // A global batch of 3 rows per rank; each rank's loss is the mean over its own rows.
    const ts::Tensor x = distinct_tensor({3 * n, 8}, 1);
    const ts::Tensor want = dense(x).tensor();
    want.mean().backward();
    const ts::Tensor x_local = ts::distribute_tensor(x, dp, {ts::Shard(0)}).to_local();
    ts::CommCounter forward;
    const nn::Value out = net(x_local);
    const Counts ag3{{"all_gather", 3}};
    CHECK_MESSAGE((n == 1 || by_collective(forward) == ag3), forward.table());
    // Between forward and backward the blocks hold their shards again; the root keeps its
    // gathered values for the backward that follows.
    CHECK(net->b0->up->weight.is_dtensor());
    CHECK_FALSE(net->head->weight.is_dtensor());
    check_close(ts::from_local(out.tensor(), dp, {ts::Shard(0)}).full_tensor().reconcile(), want, "output");
    ts::CommCounter backward;
    out.tensor().mean().backward();
    const Counts expected_backward{{"all_gather", 2}, {"reduce_scatter", 3}};
    CHECK_MESSAGE((n == 1 || by_collective(backward) == expected_backward), backward.table());
    const auto want_params = dense->named_parameters();
    const auto got = net->named_parameters();
    REQUIRE(got.size() == want_params.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(got[i].first);
      REQUIRE(got[i].second.is_dtensor());
      CHECK(got[i].second.dtensor().placements() == ts::Placements{ts::Shard(0)});
      check_close(full_grad(got[i].second), want_params[i].second.grad(), "gradient");
    }
  }
}

TEST_CASE("fully_shard without resharding after forward gathers once per step") {
  const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {2}, {"dp"});
  FsdpNet net = sharded_net(dp, /*reshard=*/false);
  const ts::Tensor x_local = ts::distribute_tensor(distinct_tensor({4, 8}, 2), dp, {ts::Shard(0)}).to_local();
  ts::CommCounter forward;
  const nn::Value out = net(x_local);
  CHECK(by_collective(forward) == Counts{{"all_gather", 3}});
  ts::CommCounter backward;
  out.tensor().sum().backward();
  CHECK(by_collective(backward) == Counts{{"reduce_scatter", 3}});
  for (const auto& [name_bound, p] : net->named_parameters()) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    CHECK_MESSAGE(p.is_dtensor(), name);
  }
}

TEST_CASE("an optimizer steps the sharded parameters, and the state dict holds the full values") {
  const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {3}, {"dp"});
  ts::manual_seed(31);
  FsdpNet dense;
  FsdpNet net = sharded_net(dp);
  ts::optim::SGD dense_opt(dense->parameters(), {.lr = 0.1});
  ts::optim::SGD opt(net->parameters(), {.lr = 0.1});
  const ts::Tensor x = distinct_tensor({6, 8}, 3);
  for (int step = 0; step < 3; ++step) {
    dense_opt.zero_grad();
    const ts::Tensor y = dense(x).tensor();
    (y * y).mean().backward();
    dense_opt.step();
    opt.zero_grad();
    const ts::Tensor z = net(ts::distribute_tensor(x, dp, {ts::Shard(0)}).to_local()).tensor();
    (z * z).mean().backward();
    opt.step();
  }
  const nn::StateDict want = dense->state_dict();
  for (const auto& [name_bound, value] : net->state_dict()) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    REQUIRE(value.is_dtensor());
    check_close(value.dtensor().full_tensor().reconcile(), want.at(name).tensor(), "parameter after 3 steps",
                1e-4);
  }
}

TEST_CASE("fully_shard refuses a 2-d mesh, a second call and non-float mixed precision") {
  FsdpNet net;
  CHECK_THROWS_WITH_AS(ts::fully_shard(net, {.mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"})}),
                       doctest::Contains("the mesh must be the 1-d data-parallel mesh"), ts::Error);
  const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {2}, {"dp"});
  CHECK_THROWS_WITH_AS(ts::fully_shard(net, {.mesh = dp, .mp_policy = {.param_dtype = ts::kInt64}}),
                       doctest::Contains("mixed precision dtypes must be floating point"), ts::Error);
  ts::fully_shard(net, {.mesh = dp});
  CHECK(ts::is_fully_sharded(*net));
  CHECK_THROWS_WITH_AS(ts::fully_shard(net, {.mesh = dp}), doctest::Contains("already fully sharded"),
                       ts::Error);
}

TEST_CASE("mixed precision: parameters gathered and used in bf16, gradients reduced in float32") {
  const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {2}, {"dp"});
  const auto bytes_of = [](const ts::CommCounter& counter, const std::string& collective) {
    int64_t bytes = 0;
    for (const auto& e : counter.entries())
      if (e.collective == collective) bytes += e.bytes_per_rank;
    return bytes;
  };
  const ts::Tensor x_local = ts::distribute_tensor(distinct_tensor({4, 8}, 6), dp, {ts::Shard(0)}).to_local();
  // The same step in float32 and in bf16 parameters with float32 reduction.
  int64_t full_gathered = 0, full_reduced = 0;
  {
    FsdpNet full = sharded_net(dp);
    nn::Value full_out;
    {
      ts::CommCounter counter;
      full_out = full(x_local);
      full_gathered = bytes_of(counter, "all_gather");
    }
    ts::CommCounter counter;
    full_out.tensor().sum().backward();
    full_reduced = bytes_of(counter, "reduce_scatter");
  }

  ts::manual_seed(31);
  FsdpNet mixed;
  ts::manual_seed(31);
  FsdpNet reference;  // the dense model with bf16 parameters
  reference->to(ts::kBFloat16);
  const ts::MixedPrecisionPolicy policy{.param_dtype = ts::kBFloat16, .reduce_dtype = ts::kFloat32};
  ts::fully_shard(mixed->b0, {.mesh = dp, .mp_policy = policy});
  ts::fully_shard(mixed->b1, {.mesh = dp, .mp_policy = policy});
  ts::fully_shard(mixed, {.mesh = dp, .mp_policy = policy});
  nn::Value out;
  {
    ts::CommCounter forward;
    out = mixed(x_local);
    CHECK(bytes_of(forward, "all_gather") * 2 == full_gathered);  // half the bytes gathered
  }
  CHECK(out.tensor().dtype() == ts::kFloat32);  // float32 inputs promote, as in PyTorch
  {
    ts::CommCounter backward;
    out.tensor().sum().backward();
    CHECK(bytes_of(backward, "reduce_scatter") == full_reduced);  // the same bytes reduced
  }
  for (const auto& [name_bound, p] : mixed->named_parameters()) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    CHECK(p.dtype() == ts::kFloat32);  // the sharded parameters keep their dtype
    CHECK(p.dtensor_grad().dtype() == ts::kFloat32);
  }
  const ts::Tensor want = reference(distinct_tensor({4, 8}, 6)).tensor();
  check_close(ts::from_local(out.tensor(), dp, {ts::Shard(0)}).full_tensor().reconcile(), want, "output",
              1e-6);
}

TEST_CASE("FSDP's peak parameter memory per rank: the shards, the root and one block gathered at a time") {
  const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {4}, {"dp"});
  // Byte counts by hand (float32): a block holds up [16, 8] + [16] and down [8, 16] + [8], 1120
  // bytes; the root's head [5, 8] + [5], 180 bytes. Rank 0 holds the first ceil(rows / 4) rows of
  // each: per block 4*8 + 4 + 2*16 + 2 floats = 280 bytes, the head 2*8 + 2 floats = 72 bytes.
  const int64_t shards = 2 * 280 + 72, root = 180, block = 1120;
  for (const bool reshard : {true, false}) {
    CAPTURE(reshard);
    ts::manual_seed(31);
    FsdpNet net;
    ts::MemoryCounter memory;
    ts::fully_shard(net->b0, {.mesh = dp, .reshard_after_forward = reshard});
    ts::fully_shard(net->b1, {.mesh = dp, .reshard_after_forward = reshard});
    ts::fully_shard(net, {.mesh = dp});
    CHECK(memory.current_bytes("parameters") == shards);
    memory.reset_peak();
    const ts::Tensor x_local =
        ts::distribute_tensor(distinct_tensor({8, 8}, 7), dp, {ts::Shard(0)}).to_local();
    net(x_local).tensor().sum().backward();
    // Resharding after forward holds one block at a time; without it both stay until backward.
    CHECK(memory.peak_bytes("parameters") == shards + root + (reshard ? block : 2 * block));
    CHECK(memory.current_bytes("parameters") == shards);  // everything released after backward
    CHECK(memory.current_bytes("gradients") == shards);   // each rank holds its gradient shards
  }
}
