#include <doctest/doctest.h>

#include <cstring>

#include <tessera/tessera.hpp>

namespace ts = tessera;

TEST_CASE("factories inside a mode make local tensors over its ranks") {
  ts::LocalMode mode(4);
  ts::Tensor x = ts::ones({2, 3});
  CHECK(x.is_local());
  CHECK(x.ranks() == ts::RankSet::range(4));
  CHECK(ts::equal(x.shard(3), [] {
    ts::DisabledLocalMode plain = ts::maybe_disable_local_mode();
    return ts::ones({2, 3});
  }()));
  CHECK(ts::tensor({1, 2}).is_local());
  CHECK(ts::arange(3).is_local());
  CHECK(ts::eye(2).is_local());
  CHECK(ts::full({1}, 2).ranks().size() == 4);
  // Ops on plain tensors stay plain inside a mode.
  ts::Tensor p;
  {
    auto off = mode.disable();
    p = ts::ones({2});
  }
  CHECK_FALSE(p.is_local());
  CHECK_FALSE((p + p).is_local());
}

TEST_CASE("modes nest and restore, and take explicit rank sets") {
  CHECK(ts::active_local_mode() == nullptr);
  {
    ts::LocalMode outer(2);
    {
      ts::LocalMode inner(ts::RankSet{0, 2, 5});
      CHECK(ts::zeros({1}).ranks() == ts::RankSet{0, 2, 5});
      {
        auto off = inner.disable();
        CHECK_FALSE(ts::zeros({1}).is_local());
        // Ops on existing local tensors still run per rank while disabled.
      }
    }
    CHECK(ts::zeros({1}).ranks() == ts::RankSet{0, 1});
  }
  CHECK(ts::active_local_mode() == nullptr);
  CHECK_FALSE(ts::zeros({1}).is_local());
  CHECK_THROWS_WITH_AS(ts::LocalMode(ts::RankSet{}), doctest::Contains("at least one rank"), ts::Error);
}

TEST_CASE("disable and maybe_disable (tutorial scenario 5)") {
  auto make_plain = [] {
    auto off = ts::maybe_disable_local_mode();
    return ts::tensor({1.f, 2.f, 3.f});
  };
  CHECK_FALSE(make_plain().is_local());
  ts::LocalMode mode(4);
  CHECK_FALSE(make_plain().is_local());
  ts::Tensor existing = ts::ones({2});
  auto off = mode.disable();
  CHECK((existing * 2).is_local());
}

TEST_CASE("rank_map and tensor_map") {
  ts::Tensor outside = ts::rank_map([](int rank) { return ts::full({2}, float(rank) + 7); });
  CHECK_FALSE(outside.is_local());
  CHECK(outside.to_vector<float>() == std::vector<float>{7, 7});

  ts::LocalMode mode(4);
  ts::Tensor lt = ts::rank_map([](int rank) {
    CHECK_FALSE(ts::zeros({1}).is_local());  // computed with the mode disabled
    return ts::full({2, 3}, float(rank));
  });
  for (int r = 0; r < 4; ++r) CHECK(lt.shard(r).to_vector<float>() == std::vector<float>(6, float(r)));
  ts::Tensor squared =
      ts::tensor_map(lt + 1, [](int rank, const ts::Tensor& shard) { return shard * (rank + 1); });
  for (int r = 0; r < 4; ++r)
    CHECK(squared.shard(r).to_vector<float>() == std::vector<float>(6, float((r + 1) * (r + 1))));
  ts::Tensor dropped = ts::tensor_map(
      lt, [](int rank, const ts::Tensor& shard) { return rank % 2 == 0 ? shard : ts::Tensor(); });
  CHECK(dropped.ranks() == ts::RankSet{0, 2});
  CHECK_THROWS_WITH_AS(ts::tensor_map(lt, [](int, const ts::Tensor&) { return ts::Tensor(); }),
                       doctest::Contains("dropped every rank"), ts::Error);
}

TEST_CASE("run_per_rank unwraps local arguments and combines results") {
  auto offset_slice = [](int64_t rank, int64_t chunk) {
    return ts::arange(rank * chunk, (rank + 1) * chunk);
  };
  CHECK(ts::run_per_rank(offset_slice, ts::current_rank(), int64_t{4}).to_vector<int64_t>() ==
        std::vector<int64_t>{0, 1, 2, 3});
  ts::LocalMode mode(3);
  ts::Tensor slices = ts::run_per_rank(offset_slice, ts::current_rank(), int64_t{4});
  for (int r = 0; r < 3; ++r)
    CHECK(slices.shard(r).to_vector<int64_t>() ==
          std::vector<int64_t>{4 * r, 4 * r + 1, 4 * r + 2, 4 * r + 3});
  // Integers that differ become a local int; booleans must agree.
  ts::SymInt lengths = ts::run_per_rank([](const ts::Tensor& t) { return t.size(0) + 0; }, slices);
  CHECK(lengths == 4);
  ts::SymInt doubled = ts::run_per_rank([](int64_t r) { return r * 2; }, ts::current_rank());
  CHECK(doubled.values() == std::map<int, int64_t>{{0, 0}, {1, 2}, {2, 4}});
  CHECK_THROWS_WITH_AS(ts::run_per_rank([](int64_t r) { return r > 0; }, ts::current_rank()),
                       doctest::Contains("differs between ranks"), ts::Error);
  CHECK(ts::run_per_rank([] { return ts::in_per_rank_region(); }));
  CHECK_FALSE(ts::in_per_rank_region());
}

TEST_CASE("random numbers: same on every rank by default, per-rank seeds differ, reproducible") {
  ts::Tensor first, again;
  {
    ts::LocalMode mode(3);
    ts::manual_seed(1234);
    first = ts::randn({4});
    CHECK_NOTHROW(first.reconcile());  // identical on all ranks
  }
  {
    ts::LocalMode mode(3);
    ts::manual_seed(1234);
    again = ts::randn({4});
  }
  CHECK(ts::equal(first, again));
  {
    ts::LocalMode mode(3);
    ts::manual_seed(ts::LocalInt({{0, 1}, {1, 2}, {2, 3}}));
    ts::Tensor per_rank = ts::rand({4});
    CHECK_THROWS_AS(per_rank.reconcile(), ts::Error);
    ts::Generator g1(2);
    auto off = ts::maybe_disable_local_mode();
    CHECK(ts::equal(per_rank.shard(1), ts::rand({4}, g1)));
  }
}

TEST_CASE("results do not depend on the thread count") {
  // Large enough that ranks run on the pool.
  auto run = [] {
    ts::LocalMode mode(7);
    ts::manual_seed(ts::LocalInt({{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}}));
    ts::Tensor a = ts::randn({128, 256});
    ts::Tensor b = ts::randn({256, 64});
    return ts::softmax(ts::matmul(a, b), 1).sum({0});
  };
  const char* saved = std::getenv("TESSERA_THREADS");
  CHECK(saved == nullptr);
  ts::set_threads(1);
  ts::Tensor serial = run();
  ts::set_threads(4);
  ts::Tensor parallel = run();
  ts::set_threads(0);
  for (int r = 0; r < 7; ++r) {
    const std::vector<float> s = serial.shard(r).to_vector<float>();
    const std::vector<float> p = parallel.shard(r).to_vector<float>();
    CHECK(std::memcmp(s.data(), p.data(), s.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("the thread count comes from configuration, and TESSERA_THREADS wins") {
  ts::Config config = ts::Config::from_string("[execution]\nthreads = 3\n");
  CHECK(config.threads == 3);
  CHECK_THROWS_WITH_AS(ts::Config::from_string("[execution]\nthreads = -1\n", "t.toml"),
                       doctest::Contains("t.toml:2: key 'execution.threads'"), ts::ConfigError);
  ts::set_threads(3);
  CHECK(ts::threads() == 3);
  setenv("TESSERA_THREADS", "2", 1);
  ts::set_threads(3);
  CHECK(ts::threads() == 2);
  setenv("TESSERA_THREADS", "many", 1);
  CHECK_THROWS_WITH_AS(ts::set_threads(0), doctest::Contains("TESSERA_THREADS='many' is not a thread count"),
                       ts::Error);
  unsetenv("TESSERA_THREADS");
  ts::set_threads(0);
  CHECK(ts::threads() >= 1);
}
