// Shared replicas (docs/planning.md): ranks that hold identical shards hold one buffer, copy-on-write.
// Sharing is proven by equal current_address() (data_ptr would give the shard bytes of its own); every write
// (through a shard handle, a view of it, an in-place op on the local tensor, a collective's result, copy_,
// from several threads at once) must reach exactly the rank written and no other. Expected values are
// computed here from the source values, never read back from the code under test.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

// 0.5, 1.5, 2.5, ... (distinct values: a block in the wrong place shows).
std::vector<float> counting_values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) + 0.5f;
  return v;
}

ts::Tensor plain_tensor(const std::vector<float>& values, const ts::Shape& shape) {
  ts::DisabledLocalMode plain;
  return ts::from_values(values, shape);
}

// This process's resident memory now (not its peak, which earlier cases in the run may have set).
long resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE) / (1024 * 1024);
}

std::vector<float> plus(std::vector<float> v, float x) {
  for (float& e : v) e += x;
  return v;
}

}  // namespace

TEST_CASE("a replicated distribute_tensor shares one buffer across ranks, and each rank holds the source") {
  ts::LocalMode mode(4);
  const std::vector<float> source = counting_values(12);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
  const ts::DTensor d = ts::distribute_tensor(plain_tensor(source, {3, 4}), mesh, {ts::Replicate()});
  const ts::Tensor& local = d.to_local();
  const void* first = local.shard(0).current_address();
  REQUIRE(first != nullptr);
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(local.shard(r).current_address() == first);
    CHECK(local.shard(r).to_vector<float>() == source);
  }
}

TEST_CASE("ranks that differ only along a Replicate dim share, ranks holding different parts do not") {
  ts::LocalMode mode(6);
  const std::vector<float> source = counting_values(6 * 4);
  // (3, 2) mesh, Shard(0) on dim 0 and Replicate on dim 1: ranks 2i and 2i+1 hold rows 2i..2i+1.
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3, 2});
  const ts::DTensor d =
      ts::distribute_tensor(plain_tensor(source, {6, 4}), mesh, {ts::Shard(0), ts::Replicate()});
  const ts::Tensor& local = d.to_local();
  std::set<const void*> buffers;
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(local.shard(2 * i).current_address() == local.shard(2 * i + 1).current_address());
    buffers.insert(local.shard(2 * i).current_address());
    const std::vector<float> rows(source.begin() + 8 * i, source.begin() + 8 * (i + 1));
    CHECK(local.shard(2 * i).to_vector<float>() == rows);
    CHECK(local.shard(2 * i + 1).to_vector<float>() == rows);
  }
  CHECK(buffers.size() == 3);
}

TEST_CASE("a write through one rank's shard handle copies that shard first, the others keep sharing") {
  ts::LocalMode mode(4);
  const std::vector<float> source = counting_values(8);
  const ts::DTensor d =
      ts::distribute_tensor(plain_tensor(source, {8}), ts::init_device_mesh("cpu", {4}), {ts::Replicate()});
  const ts::Tensor& local = d.to_local();
  const void* shared = local.shard(0).current_address();
  ts::Tensor one = local.shard(1);
  one.copy_(one + 10.0);
  CHECK(local.shard(1).to_vector<float>() == plus(source, 10.f));
  CHECK(local.shard(1).current_address() != shared);
  for (int r : {0, 2, 3}) {
    CAPTURE(r);
    CHECK(local.shard(r).to_vector<float>() == source);
    CHECK(local.shard(r).current_address() == shared);
  }
}

TEST_CASE("a write through a view of a shared shard reaches that rank's shard and no other rank") {
  ts::LocalMode mode(3);
  const std::vector<float> source = counting_values(12);
  const ts::DTensor d = ts::distribute_tensor(plain_tensor(source, {3, 4}), ts::init_device_mesh("cpu", {3}),
                                              {ts::Replicate()});
  const ts::Tensor& local = d.to_local();
  ts::Tensor row = local.shard(2).narrow(0, 1, 1);  // row 1 of rank 2's shard
  row.fill_(-1.0);
  std::vector<float> expected = source;
  for (int c = 0; c < 4; ++c) expected[static_cast<size_t>(4 + c)] = -1.f;
  CHECK(local.shard(2).to_vector<float>() == expected);
  CHECK(row.to_vector<float>() == std::vector<float>(4, -1.f));
  CHECK(local.shard(0).to_vector<float>() == source);
  CHECK(local.shard(1).to_vector<float>() == source);
  // A second write through the same view lands in rank 2's (now private) copy.
  row.fill_(-2.0);
  for (int c = 0; c < 4; ++c) expected[static_cast<size_t>(4 + c)] = -2.f;
  CHECK(local.shard(2).to_vector<float>() == expected);
  CHECK(local.shard(0).current_address() == local.shard(1).current_address());
}

TEST_CASE("an in-place op on the local tensor with per-rank operands gives each rank its own result") {
  ts::LocalMode mode(5);
  const std::vector<float> source = counting_values(6);
  const ts::DTensor d =
      ts::distribute_tensor(plain_tensor(source, {6}), ts::init_device_mesh("cpu", {5}), {ts::Replicate()});
  ts::Tensor local = d.to_local();
  const ts::Tensor per_rank = ts::rank_map([](int r) { return ts::full({6}, static_cast<float>(100 * r)); });
  local.copy_(local + per_rank);
  for (int r = 0; r < 5; ++r) {
    CAPTURE(r);
    CHECK(local.shard(r).to_vector<float>() == plus(source, static_cast<float>(100 * r)));
  }
}

TEST_CASE("copy_ into a shared shard and a collective's result on shared shards stay per rank") {
  ts::LocalMode mode(7);
  const std::vector<float> source = counting_values(5);
  const ts::DTensor d =
      ts::distribute_tensor(plain_tensor(source, {5}), ts::init_device_mesh("cpu", {7}), {ts::Replicate()});
  ts::Tensor local = d.to_local();
  const std::vector<float> other = {9.f, 8.f, 7.f, 6.f, 5.f};
  {
    ts::DisabledLocalMode plain;
    ts::Tensor three = local.shard(3);
    three.copy_(ts::from_values(other, {5}));
  }
  CHECK(local.shard(3).to_vector<float>() == other);
  for (int r : {0, 1, 2, 4, 5, 6}) CHECK(local.shard(r).to_vector<float>() == source);
  // all_reduce(sum): six ranks hold `source`, rank 3 holds `other` (float sums of small integers
  // and halves are exact in any order).
  ts::dist::all_reduce(local);
  std::vector<float> sum(5);
  for (size_t i = 0; i < 5; ++i) sum[i] = 6 * source[i] + other[i];
  for (int r = 0; r < 7; ++r) {
    CAPTURE(r);
    CHECK(local.shard(r).to_vector<float>() == sum);
    // Every rank received the same reduction: one buffer, shared (simulated worlds evaluate the
    // schedule's reductions once; see comm/plan_evaluator).
    CHECK(local.shard(r).current_address() == local.shard(0).current_address());
  }
  // Each rank's result is its own to write.
  ts::Tensor five = local.shard(5);
  five.copy_(five * 2.0);
  CHECK(local.shard(5).to_vector<float>()[0] == 2 * sum[0]);
  CHECK(local.shard(4).to_vector<float>() == sum);
}

TEST_CASE("replicas written by several threads at once each get their own bytes") {
  constexpr int kRanks = 8;
  ts::LocalMode mode(kRanks);
  const std::vector<float> source = counting_values(4096);
  const ts::DTensor d = ts::distribute_tensor(plain_tensor(source, {4096}),
                                              ts::init_device_mesh("cpu", {kRanks}), {ts::Replicate()});
  const ts::Tensor& local = d.to_local();
  std::vector<ts::Tensor> shards;
  for (int r = 0; r < kRanks; ++r) shards.push_back(local.shard(r));
  std::vector<std::thread> writers;
  for (int r = 0; r < kRanks; ++r)
    writers.emplace_back([&shards, r] {
      ts::Tensor& mine = shards[static_cast<size_t>(r)];
      for (int repeat = 0; repeat < 20; ++repeat) mine.copy_(mine + static_cast<double>(r));
    });
  for (std::thread& t : writers) t.join();
  std::set<const void*> buffers;
  for (int r = 0; r < kRanks; ++r) {
    CAPTURE(r);
    CHECK(local.shard(r).to_vector<float>() == plus(source, static_cast<float>(20 * r)));
    buffers.insert(local.shard(r).current_address());
  }
  CHECK(buffers.size() == kRanks);
}

TEST_CASE("a tensor replicated over 64 ranks costs memory once, not 64 times") {
  constexpr int64_t kFloats = int64_t{4} << 20;  // 16 MiB
  ts::LocalMode mode(64);
  const ts::Tensor big = [] {
    ts::DisabledLocalMode plain;
    return ts::ones({kFloats});
  }();
  const long before = resident_mib();
  const ts::DTensor d = ts::distribute_tensor(big, ts::init_device_mesh("cpu", {64}), {ts::Replicate()});
  // One copy is 16 MiB; 64 would be 1 GiB. Allow the copy plus slack.
  const long grown_mib = resident_mib() - before;
  CAPTURE(grown_mib);
  CHECK(grown_mib < 48);
  CHECK(d.to_local().shard(63).current_address() == d.to_local().shard(0).current_address());
}

TEST_CASE("factories give every rank one shared buffer, one write does not reach the other ranks") {
  ts::LocalMode mode(7);
  ts::Tensor z = ts::zeros({6});
  ts::Tensor f = ts::full({2, 3}, 2.5);
  for (int r = 1; r < 7; ++r) {
    CAPTURE(r);
    CHECK(z.shard(r).current_address() == z.shard(0).current_address());
    CHECK(f.shard(r).current_address() == f.shard(0).current_address());
  }
  ts::Tensor six = z.shard(6);
  six.fill_(4.0);
  CHECK(z.shard(6).to_vector<float>() == std::vector<float>(6, 4.f));
  for (int r = 0; r < 6; ++r) CHECK(z.shard(r).to_vector<float>() == std::vector<float>(6, 0.f));
}

TEST_CASE("randn under one seed is drawn once and shared, and draws the numbers a plain program draws") {
  std::vector<float> first, second;
  {
    ts::manual_seed(1234);
    first = ts::randn({5}).to_vector<float>();
    second = ts::randn({5}).to_vector<float>();
  }
  ts::LocalMode mode(4);
  ts::manual_seed(1234);
  const ts::Tensor a = ts::randn({5});
  const ts::Tensor b = ts::randn({5});
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(a.shard(r).to_vector<float>() == first);
    CHECK(b.shard(r).to_vector<float>() == second);
    CHECK(a.shard(r).current_address() == a.shard(0).current_address());
  }
  // Per-rank seeds: each rank its own numbers, nothing shared.
  ts::manual_seed(ts::SymInt(ts::LocalInt(ts::RankMap<int64_t>({{0, 1}, {1, 2}, {2, 3}, {3, 4}}))));
  const ts::Tensor c = ts::randn({5});
  std::set<const void*> buffers;
  for (int r = 0; r < 4; ++r) buffers.insert(c.shard(r).current_address());
  CHECK(buffers.size() == 4);
  CHECK(c.shard(0).to_vector<float>() != c.shard(1).to_vector<float>());
}

TEST_CASE("an op on shared inputs is computed once and its result is shared, distinct inputs stay distinct") {
  ts::LocalMode mode(5);
  const std::vector<float> source = counting_values(6);
  const ts::DTensor d = ts::distribute_tensor(plain_tensor(source, {2, 3}), ts::init_device_mesh("cpu", {5}),
                                              {ts::Replicate()});
  const ts::Tensor& x = d.to_local();
  const ts::Tensor doubled = x * 2.0;
  const ts::Tensor summed = ts::sum(ts::exp(x));
  const ts::Tensor mixed = x + ts::rank_map([](int r) { return ts::full({2, 3}, static_cast<float>(r)); });
  float exp_sum = 0;
  for (float v : source) exp_sum += std::exp(v);
  for (int r = 0; r < 5; ++r) {
    CAPTURE(r);
    CHECK(doubled.shard(r).current_address() == doubled.shard(0).current_address());
    CHECK(summed.shard(r).current_address() == summed.shard(0).current_address());
    std::vector<float> twice = source;
    for (float& v : twice) v *= 2;
    CHECK(doubled.shard(r).to_vector<float>() == twice);
    CHECK(summed.shard(r).item<float>() == doctest::Approx(exp_sum).epsilon(1e-6));
    CHECK(mixed.shard(r).to_vector<float>() == plus(source, static_cast<float>(r)));
  }
  std::set<const void*> buffers;
  for (int r = 0; r < 5; ++r) buffers.insert(mixed.shard(r).current_address());
  CHECK(buffers.size() == 5);
}

TEST_CASE("1024 ranks of a replicated 4 MiB tensor, and tiny factories, cost memory once") {
  const long before = resident_mib();
  ts::LocalMode mode(1024);
  const ts::Tensor ones = ts::ones({int64_t{1} << 20});  // 4 MiB
  std::vector<ts::Tensor> tiny;
  for (int i = 0; i < 16; ++i) tiny.push_back(ts::zeros({16}));
  const long grown_mib = resident_mib() - before;
  CAPTURE(grown_mib);
  CHECK(grown_mib < 64);  // 1024 copies would be 4 GiB
  CHECK(ones.shard(1023).current_address() == ones.shard(0).current_address());
}

TEST_CASE("a broadcast's results are one shared buffer, and the root keeps writing only its own") {
  ts::LocalMode mode(3);
  ts::Tensor t = ts::rank_map([](int r) {
    return ts::from_values(std::vector<float>{static_cast<float>(r), 10.f + r, 20.f + r}, {3});
  });
  ts::dist::broadcast(t, 1);
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    CHECK(t.shard(r).to_vector<float>() == std::vector<float>{1.f, 11.f, 21.f});
    CHECK(t.shard(r).current_address() == t.shard(0).current_address());
  }
  ts::Tensor root = t.shard(1);
  root.fill_(5.0);
  CHECK(t.shard(1).to_vector<float>() == std::vector<float>(3, 5.f));
  CHECK(t.shard(0).to_vector<float>() == std::vector<float>{1.f, 11.f, 21.f});
  CHECK(t.shard(2).to_vector<float>() == std::vector<float>{1.f, 11.f, 21.f});
}

TEST_CASE("a replicated distribute_tensor shares the caller's own tensor, writes on either side stay there") {
  ts::LocalMode mode(3);
  const std::vector<float> source = counting_values(4);
  ts::Tensor plain = plain_tensor(source, {4});
  const ts::DTensor d = ts::distribute_tensor(plain, ts::init_device_mesh("cpu", {3}), {ts::Replicate()});
  const ts::Tensor& local = d.to_local();
  for (int r = 0; r < 3; ++r) CHECK(local.shard(r).current_address() == plain.current_address());
  {
    ts::DisabledLocalMode off;
    plain.fill_(7.0);
  }
  CHECK(plain.to_vector<float>() == std::vector<float>(4, 7.f));
  for (int r = 0; r < 3; ++r) CHECK(local.shard(r).to_vector<float>() == source);
  ts::Tensor zero = local.shard(0);
  zero.fill_(-3.0);
  CHECK(plain.to_vector<float>() == std::vector<float>(4, 7.f));
  CHECK(local.shard(1).to_vector<float>() == source);
}

TEST_CASE(
    "distributing a local tensor leaves the caller's shards alone, and writes on either side stay there") {
  // Group rank 0 of each mesh dim is the source: its values reach the others by a broadcast in
  // place, which must not write into the caller's shards (the result starts from replicas of them).
  ts::LocalMode mode(4);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2});
  const auto values_of = [](int rank) {
    std::vector<float> v(12);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) + 100.f * static_cast<float>(rank);
    return v;
  };
  for (const ts::Placements& placements : std::vector<ts::Placements>{{ts::Replicate(), ts::Replicate()},
                                                                      {ts::Replicate(), ts::Shard(0)},
                                                                      {ts::Shard(1), ts::Replicate()},
                                                                      {ts::Shard(0), ts::Shard(1)}}) {
    CAPTURE(ts::placements_text(placements));
    ts::Tensor caller = ts::rank_map([&](int rank) { return plain_tensor(values_of(rank), {4, 3}); });
    const ts::DTensor d = ts::distribute_tensor(caller, mesh, placements);
    for (int r = 0; r < 4; ++r) CHECK(caller.shard(r).to_vector<float>() == values_of(r));
    // Every rank's shard comes from rank 0's values (the full tensor is rank 0's).
    CHECK(d.full_tensor().shard(3).to_vector<float>() == values_of(0));
    const std::vector<float> three = d.to_local().shard(3).to_vector<float>();
    ts::Tensor mine = d.to_local().shard(3);
    mine.fill_(-1.0);
    for (int r = 0; r < 4; ++r) CHECK(caller.shard(r).to_vector<float>() == values_of(r));
    ts::Tensor source = caller.shard(0);
    source.fill_(5.0);
    CHECK(d.to_local().shard(0).to_vector<float>() != std::vector<float>(d.to_local().shard(0).numel(), 5.f));
    CHECK(d.to_local().shard(3).to_vector<float>() == std::vector<float>(three.size(), -1.f));
  }
}

TEST_CASE("distributing a replicated local tensor cuts each piece once: ranks holding one piece share it") {
  // A (3, 2) mesh, [Replicate, Shard(1)] of a 4x5 tensor every rank holds in one buffer (a factory
  // in local mode makes it once): columns split 3 | 2, ranks (i, j) hold piece j for every i.
  ts::LocalMode mode(6);
  std::vector<float> source(20);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<float>(i);
  const ts::Tensor local = ts::arange(20, ts::TensorOptions(ts::DType::Float32)).reshape({4, 5});
  for (int r = 0; r < 6; ++r) REQUIRE(local.shard(r).current_address() == local.shard(0).current_address());
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3, 2});
  const ts::DTensor d = ts::distribute_tensor(local, mesh, {ts::Replicate(), ts::Shard(1)});
  const ts::Tensor& shards = d.to_local();
  for (int j = 0; j < 2; ++j) {
    const int64_t first = j == 0 ? 0 : 3, width = j == 0 ? 3 : 2;
    std::vector<float> piece;
    for (int64_t row = 0; row < 4; ++row)
      for (int64_t col = first; col < first + width; ++col)
        piece.push_back(source[static_cast<size_t>(row * 5 + col)]);
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(shards.shard(2 * i + j).sizes() == ts::Shape{4, width});
      CHECK(shards.shard(2 * i + j).to_vector<float>() == piece);
      CHECK(shards.shard(2 * i + j).current_address() == shards.shard(j).current_address());
    }
  }
  CHECK(shards.shard(0).current_address() != shards.shard(1).current_address());
  // A write to one rank's piece stays with that rank.
  ts::Tensor two = shards.shard(2);
  two.fill_(-1.0);
  CHECK(shards.shard(2).to_vector<float>() == std::vector<float>(12, -1.f));
  CHECK(shards.shard(0).to_vector<float>() != std::vector<float>(12, -1.f));
  CHECK(shards.shard(4).to_vector<float>() == shards.shard(0).to_vector<float>());
}

TEST_CASE("an AVG all_reduce gives every rank one shared mean, and a write to one rank stays there") {
  ts::LocalMode mode(4);
  // Rank r holds r + (0, 1, 2): the mean is 1.5 + (0, 1, 2), exact in float32.
  ts::Tensor t = ts::rank_map([](int r) {
    return plain_tensor({static_cast<float>(r), r + 1.f, r + 2.f}, {3});
  });
  ts::dist::all_reduce(t, ts::ReduceOp::AVG);
  const std::vector<float> mean = {1.5f, 2.5f, 3.5f};
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(t.shard(r).to_vector<float>() == mean);
    CHECK(t.shard(r).current_address() == t.shard(0).current_address());
  }
  ts::Tensor three = t.shard(3);
  three.copy_(three * 2.0);
  CHECK(t.shard(3).to_vector<float>() == std::vector<float>{3.f, 5.f, 7.f});
  for (int r = 0; r < 3; ++r) CHECK(t.shard(r).to_vector<float>() == mean);
}

TEST_CASE("a broadcast into shards that are views of larger buffers copies into them, viewers see it") {
  ts::LocalMode mode(3);
  // Each rank's shard is the middle 2 of its own 4-element buffer: the result cannot be shared
  // into it, so it is copied, and the rank's whole buffer shows the copy.
  std::vector<ts::Tensor> whole;
  for (int r = 0; r < 3; ++r)
    whole.push_back(plain_tensor({10.f * r, 10.f * r + 1, 10.f * r + 2, 10.f * r + 3}, {4}));
  ts::Tensor t = ts::rank_map([&](int r) { return whole[static_cast<size_t>(r)].narrow(0, 1, 2); });
  ts::dist::broadcast(t, 2);
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    CHECK(t.shard(r).to_vector<float>() == std::vector<float>{21.f, 22.f});
    const float outer = 10.f * r;
    CHECK(whole[static_cast<size_t>(r)].to_vector<float>() ==
          std::vector<float>{outer, 21.f, 22.f, outer + 3});
  }
}
