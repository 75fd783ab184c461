// The six tutorial scenarios (examples/tutorial) written for the world init_world() makes, run under mpirun
// (2 x 4 and 4 x 1 in tests/mpi/CMakeLists.txt): each is compared bit for bit with the simulated
// world of the same size, and against an expectation computed independently (plain tensors in one
// process, or a formula).
#include <cstdio>
#include <string>
#include <vector>

#include "compare.hpp"

namespace ts = tessera;

namespace {

mpi_check::Tally tally;

void expect(bool ok, const std::string& what) {
  ++tally.cases;
  if (!ok) tally.fail(what);
}

// A plain tensor with distinct values, the same on every process.
ts::Tensor plain_values(const ts::Shape& shape, int salt) {
  ts::DisabledLocalMode plain;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>((i * 37 + salt * 11) % 23) / 4.0f - 2.5f);
  return ts::from_values(v, shape);
}

// 1. basic: per-rank tensors, arithmetic, reconcile, a mode's factories, shard access.
void basic(const ts::World& world) {
  mpi_check::compare(tally, "1 basic", world, [] {
    ts::Tensor lt = ts::rank_map([](int r) { return ts::full({2, 2}, static_cast<float>(r + 1)); });
    ts::Tensor shifted = lt * 2 + 10;
    ts::Tensor ones = ts::ones({2, 3});
    return std::vector<ts::Tensor>{shifted, ones};
  });
  ts::LocalMode mode(world);
  const ts::Tensor lt = ts::rank_map([](int r) { return ts::full({2, 2}, static_cast<float>(r + 1)); });
  const ts::Tensor shifted = lt * 2 + 10;
  for (int r : world.ranks())
    expect(ts::equal(shifted.shard(r), ts::full({2, 2}, static_cast<float>(2 * (r + 1) + 10))),
           "1 basic: (r + 1) * 2 + 10 on rank " + std::to_string(r));
  expect(ts::ones({2, 3}).ranks() == world.ranks(),
         "1 basic: ones(2, 3) is a local tensor over the hosted ranks");
  expect(ts::equal(ts::full({2}, 3.0f).reconcile(), ts::full({2}, 3.0f)),
         "1 basic: reconcile of identical shards");
}

// 2. collectives: all_reduce SUM, broadcast from 0, all_gather, reduce_scatter.
void collectives(const ts::World& world) {
  const int n = world.size();
  mpi_check::compare(tally, "2 collectives", world, [n] {
    ts::Tensor sum = ts::rank_map([](int r) { return plain_values({2, 2}, r); });
    ts::dist::all_reduce(sum, ts::ReduceOp::SUM);
    ts::Tensor from0 = ts::rank_map([](int r) { return plain_values({3}, r + 5); });
    ts::dist::broadcast(from0, 0);
    std::vector<ts::Tensor> gathered;
    for (int i = 0; i < n; ++i) gathered.push_back(ts::zeros({1, 2}));
    ts::dist::all_gather(gathered, ts::rank_map([](int r) { return plain_values({1, 2}, r + 9); }));
    ts::Tensor scattered = ts::zeros({1, 2});
    ts::dist::reduce_scatter_tensor(scattered, ts::rank_map([n](int r) {
                                      return plain_values({n, 2}, r + 13);
                                    }));
    std::vector<ts::Tensor> all = {sum, from0, scattered};
    all.insert(all.end(), gathered.begin(), gathered.end());
    return all;
  });
  // Integers make the expected sums exact whatever the order of reduction.
  ts::LocalMode mode(world);
  ts::Tensor t = ts::rank_map([](int r) { return ts::full({3}, int64_t{r * r}); });
  ts::dist::all_reduce(t);
  int64_t squares = 0;
  for (int r = 0; r < n; ++r) squares += int64_t{r} * r;
  expect(ts::equal(t.reconcile(), ts::full({3}, squares)), "2 collectives: sum of r^2");
}

// 3. DTensor: round trips, matmul S(0) x R, a linear layer relu(x @ w + b).
void dtensor(const ts::World& world) {
  const int n = world.size();
  const ts::Tensor x = plain_values({2 * n + 1, 6}, 1), w = plain_values({6, 5}, 2), b = plain_values({5}, 3);
  mpi_check::compare(tally, "3 dtensor", world, [&] {
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
    const ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate()});
    const ts::DTensor db = ts::distribute_tensor(b, mesh, {ts::Replicate()});
    const ts::DTensor y = ts::relu(ts::add(ts::matmul(dx, dw), db));
    return std::vector<ts::Tensor>{dx.to_local(), ts::matmul(dx, dw).to_local(), y.to_local(),
                                   y.full_tensor()};
  });
  ts::LocalMode mode(world);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
  const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  expect(ts::equal(dx.full_tensor().reconcile(), x), "3 dtensor: S(0) round trip");
  expect(ts::equal(ts::distribute_tensor(x, mesh, {ts::Replicate()}).full_tensor().reconcile(), x),
         "3 dtensor: R round trip");
  const ts::DTensor y = ts::relu(ts::add(ts::matmul(dx, ts::distribute_tensor(w, mesh, {ts::Replicate()})),
                                         ts::distribute_tensor(b, mesh, {ts::Replicate()})));
  ts::Tensor reference;
  {
    ts::DisabledLocalMode plain;
    reference = ts::relu(ts::matmul(x, w) + b);
  }
  expect(ts::allclose(y.full_tensor().reconcile(), reference),
         "3 dtensor: relu(x @ w + b) as in one process");
}

// 4. uneven: 10 rows over the world round-trip exactly, with the default and balanced shards.
void uneven(const ts::World& world) {
  const int n = world.size();
  const ts::Tensor rows = plain_values({10, 3}, 4);
  mpi_check::compare(tally, "4 uneven", world, [&] {
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
    const ts::DTensor chunked = ts::distribute_tensor(rows, mesh, {ts::Shard(0)});
    const ts::DTensor balanced = ts::distribute_tensor(rows, mesh, {ts::BalancedShard(0)});
    return std::vector<ts::Tensor>{chunked.to_local(), balanced.to_local(), chunked.full_tensor(),
                                   balanced.full_tensor(),
                                   ts::rank_map([](int r) { return ts::ones({r % 3 + 1}); }) * 2};
  });
  ts::LocalMode mode(world);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n});
  const ts::DTensor balanced = ts::distribute_tensor(rows, mesh, {ts::BalancedShard(0)});
  for (int r : world.ranks())
    expect(balanced.to_local().shard(r).size(0) == 10 / n + (r < 10 % n ? 1 : 0),
           "4 uneven: balanced rows on rank " + std::to_string(r));
  expect(ts::equal(balanced.full_tensor().reconcile(), rows), "4 uneven: balanced round trip");
}

// 5. rank-specific: rank_map, tensor_map, run_per_rank with a per-rank data offset.
void rank_specific(const ts::World& world) {
  mpi_check::compare(tally, "5 rank-specific", world, [] {
    const ts::Tensor filled = ts::rank_map([](int r) { return ts::full({2}, static_cast<float>(r)); });
    const ts::Tensor squared =
        ts::tensor_map(ts::ones({2}), [](int r, const ts::Tensor& s) { return s * ((r + 1) * (r + 1)); });
    const ts::Tensor slices =
        ts::run_per_rank([](int64_t rank) { return ts::arange(4 * rank, 4 * rank + 4); }, ts::current_rank());
    return std::vector<ts::Tensor>{filled, squared, slices};
  });
  ts::LocalMode mode(world);
  const ts::Tensor slices =
      ts::run_per_rank([](int64_t rank) { return ts::arange(4 * rank, 4 * rank + 4); }, ts::current_rank());
  for (int r : world.ranks())
    expect(
        slices.shard(r).to_vector<int64_t>() == std::vector<int64_t>{4 * r, 4 * r + 1, 4 * r + 2, 4 * r + 3},
        "5 rank-specific: rank " + std::to_string(r) + " gets [4r .. 4r + 3]");
}

// 6. multi-dim mesh: a 2-d (dp, tp) mesh, hybrid DP + TP matmul, a 3-d round trip.
void multi_dim(const ts::World& world) {
  const int n = world.size();
  const ts::Tensor x = plain_values({8, 6}, 6), w = plain_values({6, 4}, 7),
                   cube = plain_values({4, 6, 5}, 8);
  mpi_check::compare(tally, "6 multi-dim mesh", world, [&] {
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n / 2, 2}, {"dp", "tp"});
    const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()});
    const ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(1)});
    const ts::DTensor y = ts::matmul(dx, dw);
    const ts::DeviceMesh mesh3 = ts::init_device_mesh("cpu", {2, 2, n / 4}, {"a", "b", "c"});
    const ts::DTensor d3 = ts::distribute_tensor(cube, mesh3, {ts::Shard(0), ts::Shard(1), ts::Shard(2)});
    return std::vector<ts::Tensor>{y.to_local(), y.full_tensor(), d3.to_local(), d3.full_tensor()};
  });
  ts::LocalMode mode(world);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {n / 2, 2}, {"dp", "tp"});
  expect(mesh.shape() == std::vector<int64_t>{n / 2, 2} &&
             mesh.dim_names() == std::vector<std::string>{"dp", "tp"},
         "6 multi-dim mesh: shape and names");
  const ts::DTensor y = ts::matmul(ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()}),
                                   ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(1)}));
  ts::Tensor reference;
  {
    ts::DisabledLocalMode plain;
    reference = ts::matmul(x, w);
  }
  expect(ts::allclose(y.full_tensor().reconcile(), reference),
         "6 multi-dim mesh: DP + TP matmul as in one process");
}

}  // namespace

int main() {
  try {
    const ts::World world = ts::init_world();
    if (world.num_processes() < 2 || world.size() % 4 != 0) {
      std::printf("scenarios_check needs several processes and a world size divisible by 4; got %d x %d\n",
                  world.num_processes(), world.ranks_per_process());
      return 1;
    }
    basic(world);
    collectives(world);
    dtensor(world);
    uneven(world);
    rank_specific(world);
    multi_dim(world);
    return tally.report("scenarios_check", world.process_index());
  } catch (const std::exception& e) {
    std::printf("process error: %s\n", e.what());
    return 1;
  }
}
