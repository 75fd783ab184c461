// replicate (DDP): each rank runs the whole module on its own rows; backward averages the
// gradients with one all_reduce per bucket, so every rank's gradient equals the dense model's on
// the whole batch.
#include "parallel_test_support.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;
namespace F = tessera::nn::functional;
using pt::by_collective;
using pt::check_close;
using pt::distinct_tensor;
using Counts = std::map<std::string, int64_t>;

namespace {

// up: 512 + 64 bytes, down: 512 + 32 bytes.
pt::UpDown ddp_net() { return pt::UpDown(8, 16); }

}  // namespace

TEST_CASE("replicate: averaged gradients equal the dense model's on the whole batch") {
  for (int64_t n : {1, 3, 4}) {
    CAPTURE(n);
    const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {n}, {"dp"});
    ts::manual_seed(41);
    pt::UpDown dense = ddp_net();
    ts::manual_seed(41);
    pt::UpDown net = ddp_net();
    ts::replicate(net, {.mesh = dp});
    const ts::Tensor x = distinct_tensor({2 * n, 8}, 4);
    dense(x).tensor().mean().backward();
    const ts::Tensor x_local = ts::distribute_tensor(x, dp, {ts::Shard(0)}).to_local();
    const nn::Value out = net(x_local);
    ts::CommCounter backward;
    out.tensor().mean().backward();
    const Counts one_bucket{{"all_reduce", 1}};
    CHECK_MESSAGE(by_collective(backward) == one_bucket, backward.table());
    const auto want = dense->named_parameters();
    const auto got = net->named_parameters();
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(got[i].first);
      REQUIRE_FALSE(got[i].second.is_dtensor());
      REQUIRE_FALSE(got[i].second.grad().is_local());  // one plain gradient: every rank agrees
      check_close(got[i].second.grad(), want[i].second.grad(), "gradient");
    }
  }
}

TEST_CASE("replicate fills buckets of bucket_cap_mb in reverse registration order, one all_reduce each") {
  const ts::DeviceMesh dp = ts::init_device_mesh("cpu", {2}, {"dp"});
  // Reverse order: down.bias 32, down.weight 512, up.bias 64, up.weight 512 bytes.
  struct Case {
    double cap_mb;
    int64_t buckets;
  };
  for (const Case c : {Case{25, 1}, Case{600.0 / (1 << 20), 2}, Case{524.0 / (1 << 20), 4}}) {
    CAPTURE(c.cap_mb);
    pt::UpDown net = ddp_net();
    ts::replicate(net, {.mesh = dp, .bucket_cap_mb = c.cap_mb});
    const nn::Value out =
        net(ts::distribute_tensor(distinct_tensor({4, 8}, 5), dp, {ts::Shard(0)}).to_local());
    ts::CommCounter backward;
    out.tensor().sum().backward();
    const Counts expected{{"all_reduce", c.buckets}};
    CHECK_MESSAGE(by_collective(backward) == expected, backward.table());
  }
  pt::UpDown net = ddp_net();
  CHECK_THROWS_WITH_AS(ts::replicate(net, {.mesh = dp, .bucket_cap_mb = 0}),
                       doctest::Contains("bucket_cap_mb=0 must be > 0"), ts::Error);
}
