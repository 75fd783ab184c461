// Determinism, generators, per-rank scopes and concurrent spawns.
#include <doctest/doctest.h>

#include <cstring>
#include <tessera/tessera.hpp>
#include <thread>
#include <vector>

namespace ts = tessera;

namespace {

std::vector<uint32_t> bits_of(const ts::Tensor& t) {
  const std::vector<float> values = t.to_vector<float>();
  std::vector<uint32_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return bits;
}

// A program mixing random numbers, messages and collectives; returns every rank's final bits.
std::vector<std::vector<uint32_t>> mixed_program(int n) {
  std::vector<std::vector<uint32_t>> out(static_cast<size_t>(n));
  ts::spawn(n, [&](int rank) {
    ts::manual_seed(1000 + rank);
    ts::Tensor x = ts::randn({16});
    if (n > 1) {
      ts::dist::send(x * 0.5f, (rank + 1) % n, rank);
      ts::Tensor got = ts::zeros({16});
      ts::dist::recv(got, (rank + n - 1) % n, (rank + n - 1) % n);
      x = x + got;
    }
    ts::dist::all_reduce(x, ts::ReduceOp::AVG);
    ts::Tensor shard = ts::zeros({16 / n == 0 ? 1 : 2});
    if (16 % n == 0) ts::dist::reduce_scatter_tensor(shard, x.narrow(0, 0, 2 * n).contiguous());
    out[static_cast<size_t>(rank)] = bits_of(ts::cat({x, shard}));
  });
  return out;
}

}  // namespace

TEST_CASE("spawn: the same program gives the same bits twice") {
  for (int n : {1, 3, 8}) {
    CAPTURE(n);
    CHECK(mixed_program(n) == mixed_program(n));
  }
}

TEST_CASE("spawn: rank r's random stream is LocalMode's rank r stream, seeded or not") {
  constexpr int n = 3;
  ts::manual_seed(77);
  std::vector<std::vector<float>> spawned(n), spawned_seeded(n);
  ts::spawn(n, [&](int rank) {
    spawned[static_cast<size_t>(rank)] = ts::rand({4}).to_vector<float>();
    ts::manual_seed(rank * 3 + 1);
    spawned_seeded[static_cast<size_t>(rank)] = ts::randn({4}).to_vector<float>();
  });
  ts::manual_seed(77);
  ts::LocalMode mode(n);
  const ts::Tensor local = ts::rand({4});
  ts::manual_seed(ts::SymInt(ts::LocalInt({{0, 1}, {1, 4}, {2, 7}})));
  const ts::Tensor local_seeded = ts::randn({4});
  for (int r = 0; r < n; ++r) {
    CHECK(spawned[static_cast<size_t>(r)] == local.shard(r).to_vector<float>());
    CHECK(spawned_seeded[static_cast<size_t>(r)] == local_seeded.shard(r).to_vector<float>());
  }
  CHECK(spawned_seeded[0] != spawned_seeded[1]);
}

TEST_CASE("spawn: a rank's grad mode and LocalMode scopes stay its own while it waits") {
  std::vector<int> grad_enabled(3, -1), local_inside(3, -1);
  ts::spawn(3, [&](int rank) {
    ts::Tensor t = ts::ones({1});
    if (rank == 0) {
      ts::NoGradGuard off;  // held across the wait in all_reduce
      ts::dist::all_reduce(t);
      grad_enabled[0] = ts::is_grad_enabled() ? 1 : 0;
    } else {
      ts::dist::all_reduce(t);
      grad_enabled[static_cast<size_t>(rank)] = ts::is_grad_enabled() ? 1 : 0;
    }
    // A rank may open a LocalMode of its own: a new simulated world inside its program.
    if (rank == 2) {
      ts::LocalMode inner(2);
      ts::Tensor lt = ts::rank_map([](int r) { return ts::full({1}, static_cast<float>(r + 1)); });
      ts::dist::all_reduce(lt);
      local_inside[2] = static_cast<int>(lt.shard(1).item<float>());
      ts::yield_rank();  // rank 1 runs meanwhile and must not see the mode
    } else {
      ts::yield_rank();
      local_inside[static_cast<size_t>(rank)] = ts::active_local_mode() == nullptr ? 0 : 1;
    }
  });
  CHECK(grad_enabled == std::vector<int>{0, 1, 1});
  CHECK(local_inside == std::vector<int>{0, 0, 3});
  CHECK(ts::is_grad_enabled());
  CHECK(ts::active_local_mode() == nullptr);
}

TEST_CASE("spawn: two threads run spawns of their own at the same time") {
  constexpr int n = 8;
  constexpr int rounds = 40;
  std::vector<float> results[2];
  const auto run = [&](int which) {
    std::vector<float> last(n);
    ts::spawn(n, [&](int rank) {
      ts::Tensor t = ts::full({4}, static_cast<float>(rank + which));
      for (int i = 0; i < rounds; ++i) {
        ts::dist::all_reduce(t, ts::ReduceOp::AVG);
        ts::dist::send(t, (rank + 1) % n, i);
        ts::dist::recv(t, (rank + n - 1) % n, i);
      }
      last[static_cast<size_t>(rank)] = t.to_vector<float>()[3];
    });
    results[which] = last;
  };
  std::thread a(run, 0);
  std::thread b(run, 1);
  a.join();
  b.join();
  // The average of r + which over r = 0..7 is 3.5 + which, exactly, after every round.
  CHECK(results[0] == std::vector<float>(n, 3.5f));
  CHECK(results[1] == std::vector<float>(n, 4.5f));
}

TEST_CASE("spawn: 1024 ranks with the default stack") {
  constexpr int n = 1024;
  std::vector<float> got(n);
  ts::spawn(n, [&](int rank) {
    ts::Tensor t = ts::full({16}, static_cast<float>(rank));
    ts::dist::all_reduce(t);
    got[static_cast<size_t>(rank)] = t.to_vector<float>()[15];
  });
  CHECK(got == std::vector<float>(n, static_cast<float>(n * (n - 1)) / 2));
}
