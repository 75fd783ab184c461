// Optimizers over local tensors: every rank's shard is its own parameter, with its own gradient and
// its own optimizer state, and is updated in place. Checked per rank against the oracle, on 1, 3
// and 7 ranks, with uneven and empty shards.
#include "reference.hpp"

namespace ts = tessera;
using optim_test::AdamWOracle;
using optim_test::check_close;
using optim_test::make_local;
using optim_test::SgdOracle;
using optim_test::Values;

namespace {

// Per rank: initial values and three steps of gradients, each rank different (uneven lengths).
struct RankData {
  Values theta;
  std::vector<Values> grads;
};

std::vector<RankData> three_uneven_ranks() {
  return {
      {{0.5, -1.0, 2.0}, {{0.3, -0.2, 1.0}, {-0.1, 0.4, 0.6}, {0.7, 0.05, -0.9}}},
      {{3.0}, {{-1.5}, {2.5}, {0.25}}},
      {{-0.75, 1.25}, {{0.9, -0.35}, {0.15, 0.45}, {-0.6, 1.1}}},
  };
}

std::vector<RankData> seven_ranks_with_an_empty_shard() {
  std::vector<RankData> ranks;
  for (int r = 0; r < 7; ++r) {
    const size_t n = r == 4 ? 0 : static_cast<size_t>(r % 3 + 1);
    RankData d;
    for (size_t k = 0; k < n; ++k) d.theta.push_back(0.1 * (r + 1) - 0.3 * static_cast<double>(k));
    for (int s = 0; s < 3; ++s) {
      Values g;
      for (size_t k = 0; k < n; ++k)
        g.push_back(0.05 * (r - 3) + 0.2 * s - 0.1 * static_cast<double>(k) + 0.01);
      d.grads.push_back(g);
    }
    ranks.push_back(d);
  }
  return ranks;
}

std::vector<RankData> one_rank() { return {{{1.5, -0.5}, {{0.2, 0.3}, {-0.4, 0.1}, {0.6, -0.8}}}}; }

ts::Tensor local_grad(const std::vector<RankData>& ranks, size_t step, ts::DType dtype) {
  std::vector<Values> g;
  for (const RankData& d : ranks) g.push_back(d.grads[step]);
  return make_local(g, dtype);
}

template <class Opt, class Oracle, class Options>
void run_per_rank(const std::vector<RankData>& ranks, const Options& options, ts::DType dtype) {
  std::vector<Values> theta;
  for (const RankData& d : ranks) theta.push_back(d.theta);
  ts::Tensor p = make_local(theta, dtype);
  const ts::Tensor shard0 = p.shard(0);  // a handle to one rank's shard sees its updates too
  Opt opt({p}, options);
  std::vector<Oracle> oracles(ranks.size(), Oracle{options});
  for (size_t s = 0; s < 3; ++s) {
    p.set_grad(local_grad(ranks, s, dtype));
    opt.step();
    REQUIRE(p.is_local());
    CHECK(p.ranks() == ts::RankSet::range(static_cast<int>(ranks.size())));
    for (size_t r = 0; r < ranks.size(); ++r) {
      oracles[r].step(theta[r], ranks[r].grads[s]);
      check_close(p.shard(static_cast<int>(r)), theta[r], dtype,
                  "rank " + std::to_string(r) + " step " + std::to_string(s + 1));
    }
    check_close(shard0, theta[0], dtype, "the rank-0 shard's own handle");
  }
}

}  // namespace

TEST_CASE("SGD on a local tensor: each rank's shard follows its own gradient and momentum") {
  const ts::optim::SGDOptions options{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.05};
  for (ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
    CAPTURE(ts::dtype_name(dtype));
    run_per_rank<ts::optim::SGD, SgdOracle>(three_uneven_ranks(), options, dtype);
    run_per_rank<ts::optim::SGD, SgdOracle>(seven_ranks_with_an_empty_shard(), options, dtype);
    run_per_rank<ts::optim::SGD, SgdOracle>(one_rank(), options, dtype);
  }
}

TEST_CASE("SGD nesterov and maximize on a local tensor") {
  const ts::optim::SGDOptions options{.lr = 0.05, .momentum = 0.8, .nesterov = true, .maximize = true};
  run_per_rank<ts::optim::SGD, SgdOracle>(three_uneven_ranks(), options, ts::kFloat64);
}

TEST_CASE("AdamW on a local tensor: per-rank moments") {
  const ts::optim::AdamWOptions options{.lr = 0.02, .weight_decay = 0.1};
  for (ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
    CAPTURE(ts::dtype_name(dtype));
    run_per_rank<ts::optim::AdamW, AdamWOracle>(three_uneven_ranks(), options, dtype);
    run_per_rank<ts::optim::AdamW, AdamWOracle>(seven_ranks_with_an_empty_shard(), options, dtype);
    run_per_rank<ts::optim::AdamW, AdamWOracle>(one_rank(), options, dtype);
  }
}

TEST_CASE("AdamW amsgrad + maximize on a local tensor") {
  const ts::optim::AdamWOptions options{.lr = 0.02, .betas = {0.9, 0.5}, .amsgrad = true, .maximize = true};
  run_per_rank<ts::optim::AdamW, AdamWOracle>(three_uneven_ranks(), options, ts::kFloat32);
}

TEST_CASE("a parameter made in local mode starts as one shared replica and diverges per rank") {
  // ones() in a mode gives every rank an identical shard (possibly one shared buffer); different
  // gradients must give each rank its own values without touching the others.
  ts::LocalMode mode(3);
  ts::Tensor p = ts::ones({2}, ts::kFloat64);
  REQUIRE(p.is_local());
  p.set_grad(ts::rank_map([](int r) { return ts::full({2}, 1.0 + r, ts::kFloat64); }));
  ts::optim::SGD opt({p}, {.lr = 0.25});
  opt.step();
  for (int r = 0; r < 3; ++r) CHECK(p.shard(r).to_vector<double>() == Values(2, 1.0 - 0.25 * (1 + r)));
}

TEST_CASE("a dense gradient for a local parameter applies to every rank") {
  // A plain tensor with a local one runs per rank with the same value: each rank takes the same step.
  ts::Tensor p = make_local({{1.0, 2.0}, {-1.0, 0.5}}, ts::kFloat64);
  p.set_grad(optim_test::make({2.0, -4.0}, ts::kFloat64));
  ts::optim::SGD opt({p}, {.lr = 0.5});
  opt.step();
  CHECK(p.shard(0).to_vector<double>() == Values{0.0, 4.0});
  CHECK(p.shard(1).to_vector<double>() == Values{-2.0, 2.5});
}
