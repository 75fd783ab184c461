// Ranks' products with one shared right operand (a replicated weight times per-rank activations;
// or a weight shared within groups of ranks, one stacked product per group) run as one stacked product
// (core/src/tensor/linalg.cpp, stacked_over_shared_weight): every element must still be the in-order chain of
// fused multiply-adds of its own rank's row (plugins/backend-cpu/fma_product.hpp), written out here; each
// rank's result is its own region of one buffer, which a write through one rank never changes for another.
// Products that are not alike (other left shapes, other weights, a small weight) stay per rank and give the
// same bits.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
#include <utility>
#include <vector>

#include "fma_chain.hpp"
#include "same_bits.hpp"

namespace ts = tessera;
using test::elements_off_the_chain;

namespace {

// A weight of k x n float32 at or above the 1 MiB from which products are stacked.
constexpr int64_t kK = 300, kN = 1024;

// Rank r's activations: m rows of values distinct across ranks (a generator per rank).
ts::Tensor activations(int64_t m, ts::DType dtype) {
  return ts::rank_map([&](int rank) {
    ts::Generator g(1000 + static_cast<uint64_t>(rank));
    return ts::randn({m, kK}, g, dtype);
  });
}

// Whether ranks' shards of `y` are consecutive items of one buffer, in the order given.
bool one_buffer_for(const ts::Tensor& y, const std::vector<int>& ranks) {
  const auto* first = static_cast<const char*>(y.shard(ranks.front()).current_address());
  const auto item_bytes =
      static_cast<ptrdiff_t>(y.shard(ranks.front()).numel() * static_cast<int64_t>(ts::itemsize(y.dtype())));
  for (size_t i = 1; i < ranks.size(); ++i)
    if (static_cast<const char*>(y.shard(ranks[i]).current_address()) !=
        first + static_cast<ptrdiff_t>(i) * item_bytes)
      return false;
  return true;
}

// Whether rank r's shard of `y` is item r of one [ranks, m, n] buffer (the stacked product).
bool one_stacked_buffer(const ts::Tensor& y, int ranks) {
  std::vector<int> all(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) all[static_cast<size_t>(r)] = r;
  return one_buffer_for(y, all);
}

}  // namespace

TEST_CASE(
    "ranks' products over one replicated weight are one stacked product, each element its rank's chain") {
  for (const int ranks : {2, 3, 7}) {
    for (const ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
      CAPTURE(ranks);
      CAPTURE(ts::dtype_name(dtype));
      ts::LocalMode mode(ranks);
      mode.manual_seed(5);
      const ts::Tensor w = ts::randn({kK, kN}, dtype);  // one seed on every rank: one shared buffer
      REQUIRE(w.shard(0).current_address() == w.shard(ranks - 1).current_address());
      const ts::Tensor x = activations(5, dtype);
      const ts::Tensor plain = w.shard(0);  // a plain weight is every rank's too
      for (const bool through_matmul : {false, true}) {
        const ts::Tensor y = through_matmul ? ts::matmul(x, w) : ts::mm(x, w);
        CHECK(one_stacked_buffer(y, ranks));
        const ts::Tensor y_plain = through_matmul ? ts::matmul(x, plain) : ts::mm(x, plain);
        CHECK(one_stacked_buffer(y_plain, ranks));
        for (int r = 0; r < ranks; ++r) {
          CAPTURE(r);
          const int64_t off = dtype == ts::kFloat32
                                  ? elements_off_the_chain<float>(x.shard(r), w.shard(r), y.shard(r))
                                  : elements_off_the_chain<double>(x.shard(r), w.shard(r), y.shard(r));
          CHECK(off == 0);
          CHECK(test::same_bits(y_plain.shard(r).to(ts::kFloat64).to_vector<double>(),
                                y.shard(r).to(ts::kFloat64).to_vector<double>()));
        }
      }
    }
  }
}

TEST_CASE("a write to one rank's stacked result leaves every other rank's") {
  ts::LocalMode mode(3);
  mode.manual_seed(6);
  const ts::Tensor w = ts::randn({kK, kN});
  const ts::Tensor x = activations(4, ts::kFloat32);
  ts::Tensor y = ts::mm(x, w);
  REQUIRE(one_stacked_buffer(y, 3));
  const std::vector<float> before0 = y.shard(0).to_vector<float>(), before2 = y.shard(2).to_vector<float>();
  ts::Tensor middle = y.shard(1);
  middle.fill_(7.0);  // through the shard handle, in place
  CHECK(y.shard(1).to_vector<float>() == std::vector<float>(static_cast<size_t>(4 * kN), 7.0f));
  CHECK(y.shard(0).to_vector<float>() == before0);
  CHECK(y.shard(2).to_vector<float>() == before2);
  // An in-place write through the local tensor, a different value per rank: each lands in its own
  // rank's region.
  y.copy_(ts::rank_map([](int rank) { return ts::full({4, kN}, 10.0f + static_cast<float>(rank)); }));
  for (int r = 0; r < 3; ++r)
    CHECK(y.shard(r).to_vector<float>() ==
          std::vector<float>(static_cast<size_t>(4 * kN), 10.0f + static_cast<float>(r)));
}

TEST_CASE("products that are not alike stay per rank and give each rank's chain") {
  ts::LocalMode mode(3);
  mode.manual_seed(7);
  const ts::Tensor shared = ts::randn({kK, kN});
  // Uneven activations: 2, 3 and 1 rows.
  const ts::Tensor uneven = ts::rank_map([](int rank) {
    ts::Generator g(2000 + static_cast<uint64_t>(rank));
    return ts::randn({rank == 0 ? 2 : rank == 1 ? 3 : 1, kK}, g);
  });
  // A weight of its own on every rank, and a small shared one (under 1 MiB).
  const ts::Tensor distinct = ts::rank_map([](int rank) {
    ts::Generator g(3000 + static_cast<uint64_t>(rank));
    return ts::randn({kK, kN}, g);
  });
  const ts::Tensor small = ts::randn({kK, 64});
  const ts::Tensor x = activations(4, ts::kFloat32);
  struct Case {
    const char* what;
    ts::Tensor a, b;
  };
  for (const Case& c : {Case{"uneven rows", uneven, shared}, Case{"distinct weights", x, distinct},
                        Case{"small weight", x, small}}) {
    CAPTURE(c.what);
    const ts::Tensor y = ts::mm(c.a, c.b);
    CHECK_FALSE(one_stacked_buffer(y, 3));
    for (int r = 0; r < 3; ++r)
      CHECK(elements_off_the_chain<float>(c.a.shard(r), c.b.shard(r), y.shard(r)) == 0);
  }
}

TEST_CASE("ranks sharing a weight within groups (tensor times data parallel) stack per group") {
  SUBCASE("a weight laid out [Replicate, Shard(1)] on a (3, 2) mesh: one group per column") {
    ts::LocalMode mode(6);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3, 2});
    mode.manual_seed(10);
    const ts::Tensor full = ts::randn({kK, 2 * kN});
    const ts::Tensor w = ts::distribute_tensor(full, mesh, {ts::Replicate(), ts::Shard(1)}).to_local();
    const ts::Tensor x = activations(3, ts::kFloat32);
    const ts::Tensor y = ts::matmul(x, w);
    CHECK(one_buffer_for(y, {0, 2, 4}));
    CHECK(one_buffer_for(y, {1, 3, 5}));
    for (int r = 0; r < 6; ++r) {
      CAPTURE(r);
      CHECK(elements_off_the_chain<float>(x.shard(r), w.shard(r), y.shard(r)) == 0);
    }
  }
  SUBCASE("7 ranks: 0, 2, 4, 6 share one weight, 1 and 5 another, 3 has one of its own") {
    ts::LocalMode mode(7);
    mode.manual_seed(11);
    const ts::Tensor a = ts::randn({kK, kN}), b = ts::randn({kK, kN});  // replicas on every rank
    std::vector<std::pair<int, ts::Tensor>> shards;
    for (int r = 0; r < 7; ++r)
      shards.emplace_back(r, r % 2 == 0 ? a.shard(r) : r == 3 ? b.shard(r).clone() : b.shard(r));
    const ts::Tensor w = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
    REQUIRE(w.shard(0).current_address() == w.shard(6).current_address());
    REQUIRE(w.shard(1).current_address() == w.shard(5).current_address());
    REQUIRE(w.shard(3).current_address() != w.shard(1).current_address());
    const ts::Tensor x = activations(3, ts::kFloat32);
    const ts::Tensor y = ts::matmul(x, w);
    CHECK(one_buffer_for(y, {0, 2, 4, 6}));
    CHECK(one_buffer_for(y, {1, 5}));
    for (int r = 0; r < 7; ++r) {
      CAPTURE(r);
      CHECK(elements_off_the_chain<float>(x.shard(r), w.shard(r), y.shard(r)) == 0);
    }
  }
}

TEST_CASE("bmm of 2-d local operands over a shared weight is refused as on every other path") {
  ts::LocalMode mode(3);
  mode.manual_seed(9);
  const ts::Tensor w = ts::randn({kK, kN});
  const ts::Tensor x = activations(2, ts::kFloat32);
  CHECK_THROWS_WITH_AS(ts::bmm(x, w), doctest::Contains("bmm"), ts::Error);
}

TEST_CASE("gradients through a stacked product have the bits of the per-rank ones") {
  ts::LocalMode mode(3);
  mode.manual_seed(8);
  const ts::Tensor w_values = ts::randn({kK, kN});
  const ts::Tensor x_values = activations(4, ts::kFloat32);
  // The same values twice: a replicated weight (stacked), and the weight as three private copies
  // (per rank, the path that reads no shared buffer).
  const auto gradients = [&](const ts::Tensor& weight) {
    ts::Tensor w = weight.detach().set_requires_grad(true);
    ts::Tensor x = x_values.detach().set_requires_grad(true);
    ts::sum(ts::relu(ts::mm(x, w))).backward();
    return std::pair(x.grad(), w.grad());
  };
  ts::Tensor private_copies;
  {
    std::vector<std::pair<int, ts::Tensor>> shards;
    for (int r = 0; r < 3; ++r) shards.emplace_back(r, w_values.shard(r).clone());
    private_copies = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
  }
  REQUIRE(private_copies.shard(0).current_address() != private_copies.shard(1).current_address());
  const auto [x_grad, w_grad] = gradients(w_values);
  const auto [x_grad_apart, w_grad_apart] = gradients(private_copies);
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    CHECK(test::same_bits(x_grad.shard(r).to_vector<float>(), x_grad_apart.shard(r).to_vector<float>()));
    CHECK(test::same_bits(w_grad.shard(r).to_vector<float>(), w_grad_apart.shard(r).to_vector<float>()));
  }
}
