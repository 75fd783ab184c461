// DTensors on a meta mesh: distribute_tensor, every redistribution, full_tensor and the DTensor
// ops give the placements, global shapes and per-rank shard shapes the same program gives on cpu,
// with the same collectives counted; and a 1024-rank plan of a 16384 x 16384 tensor runs without
// allocating its data.
#include <sys/resource.h>

#include <functional>

#include "meta_test_support.hpp"

using namespace meta_test;

namespace {

void check_same_dtensor(const ts::DTensor& cpu, const ts::DTensor& meta) {
  CHECK(meta.placements() == cpu.placements());
  CHECK(meta.shape() == cpu.shape());
  CHECK(meta.dtype() == cpu.dtype());
  CHECK(meta.device_mesh().shape() == cpu.device_mesh().shape());
  CHECK(meta.device_mesh().device_type() == "meta");
  check_same_layout(cpu.to_local(), meta.to_local());
}

// What one run of a program gave: its DTensors and what the comm counter saw.
struct Run {
  std::vector<ts::DTensor> tensors;
  std::vector<ts::CommCounter::Entry> counted;
  size_t implicit = 0;
};

void check_same_counts(const Run& cpu, const Run& meta) {
  check_same_entries(cpu.counted, meta.counted);
  CHECK(meta.implicit == cpu.implicit);
}

// Runs `program` on a mesh of `shape` whose device type is `backend` (its tensors made there).
using Program = std::function<std::vector<ts::DTensor>(const ts::DeviceMesh&, const std::string& backend)>;
Run run(const std::vector<int64_t>& shape, const Program& program, const std::string& backend) {
  int64_t ranks = 1;
  for (int64_t s : shape) ranks *= s;
  ts::LocalMode mode(static_cast<int>(ranks));
  const ts::CommCounter counter;
  Run result;
  result.tensors = program(ts::init_device_mesh(backend, shape), backend);
  result.counted = counter.entries();
  result.implicit = counter.implicit_redistributions().size();
  return result;
}

void compare(const std::vector<int64_t>& shape, const Program& program) {
  const Run cpu = run(shape, program, "cpu");
  const Run meta = run(shape, program, "meta");
  REQUIRE(meta.tensors.size() == cpu.tensors.size());
  for (size_t i = 0; i < cpu.tensors.size(); ++i) {
    CAPTURE(i);
    check_same_dtensor(cpu.tensors[i], meta.tensors[i]);
  }
  check_same_counts(cpu, meta);
}

// A plain tensor of `shape` made on `backend` (outside local mode: what every rank holds).
ts::Tensor plain(const ts::Shape& shape, const std::string& backend) {
  ts::DisabledLocalMode off;
  return ts::randn(shape, on(backend));
}

}  // namespace

TEST_CASE("distribute_tensor, every redistribution and full_tensor match cpu on 1, 3 and 7 ranks (uneven)") {
  const std::vector<ts::Placement> choices = {ts::Replicate(), ts::Shard(0), ts::Shard(1),
                                              ts::BalancedShard(1)};
  for (int64_t world : {1, 3, 7}) {
    CAPTURE(world);
    compare({world}, [&](const ts::DeviceMesh& mesh, const std::string& b) {
      std::vector<ts::DTensor> out;
      const ts::Tensor x = plain({10, 5}, b);  // 10 and 5 split unevenly over 3 and 7
      for (const ts::Placement& from : choices) {
        const ts::DTensor d = ts::distribute_tensor(x, mesh, {from});
        out.push_back(d);
        for (const ts::Placement& to : choices) out.push_back(d.redistribute({to}));
        out.push_back(ts::distribute_tensor(x, mesh, {from}));
        const ts::Tensor full = d.full_tensor();
        CHECK(full.sizes() == ts::Shape{10, 5});
        CHECK(full.backend() == b);
      }
      return out;
    });
  }
}

TEST_CASE("2-d meshes: distribute, redistribute over both dims and Partial sums match cpu") {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{2, 3}, {3, 1}, {1, 7}}) {
    CAPTURE(shape.size());
    compare(shape, [](const ts::DeviceMesh& mesh, const std::string& b) {
      const ts::Tensor x = plain({7, 9}, b), w = plain({9, 4}, b);
      const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Shard(1)});
      const ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(0)});
      const ts::DTensor y = ts::matmul(dx, dw);  // S(1) x S(0) along dim 1: a Partial
      return std::vector<ts::DTensor>{dx,
                                      dw,
                                      y,
                                      y.redistribute({ts::Shard(0), ts::Replicate()}),
                                      dx.redistribute({ts::Shard(1), ts::Shard(0)}),
                                      dx.redistribute({ts::Replicate(), ts::Replicate()})};
    });
  }
}

TEST_CASE("the DTensor ops match cpu on a meta mesh") {
  compare({2, 3}, [](const ts::DeviceMesh& mesh, const std::string& b) {
    const ts::Tensor x = plain({6, 8}, b), w = plain({8, 6}, b), bias = plain({6}, b),
                     batch = plain({4, 6, 8}, b);
    const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()});
    const ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(1)});
    const ts::DTensor db = ts::distribute_tensor(bias, mesh, {ts::Replicate(), ts::Shard(0)});
    const ts::DTensor dbatch = ts::distribute_tensor(batch, mesh, {ts::Shard(0), ts::Shard(2)});
    const ts::DTensor dbatch_t =
        ts::distribute_tensor(plain({4, 8, 3}, b), mesh, {ts::Shard(0), ts::Replicate()});
    const ts::DTensor y = ts::matmul(dx, dw);
    ts::Tensor one;
    {
      ts::DisabledLocalMode off;
      one = ts::ones({1}, on(b));
    }
    return std::vector<ts::DTensor>{y,
                                    ts::mm(dx, dw),
                                    ts::bmm(dbatch, dbatch_t),
                                    y + db,
                                    y - db,
                                    y * db,
                                    y / db,
                                    y + one,
                                    y - one,
                                    y * one,
                                    y / one,
                                    y + 1.0,
                                    y - 2.0,
                                    y * 3.0,
                                    y / 4.0,
                                    ts::maximum(y, y),
                                    ts::minimum(y, db),
                                    -y,
                                    ts::neg(y),
                                    ts::abs(y),
                                    ts::relu(y),
                                    ts::gelu(y),
                                    ts::exp(y),
                                    ts::log(y),
                                    ts::sqrt(y),
                                    ts::tanh(y),
                                    ts::sigmoid(y),
                                    ts::sum(y),
                                    ts::sum(y, {0}),
                                    ts::mean(y, {1}, true),
                                    ts::max(dx, {1}),
                                    ts::min(dx),
                                    ts::prod(dx, {0}),
                                    ts::softmax(y, 1),
                                    ts::log_softmax(dx, 0),
                                    ts::transpose(dx, 0, 1),
                                    ts::permute(dbatch, {2, 0, 1}),
                                    ts::reshape(dx, {48}),
                                    ts::reshape(dbatch, {4, 48}),
                                    ts::view(dx, {6, 2, 4})};
  });
}

TEST_CASE("a cpu tensor distributed over a meta mesh keeps only its shapes") {
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("meta", {3});
  const ts::DTensor d = ts::distribute_tensor(plain({7, 2}, "cpu"), mesh, {ts::Shard(0)});
  // torch.chunk sizes: ceil(7 / 3) = 3, then 3, then 1.
  const std::vector<ts::Shape> expected = {{3, 2}, {3, 2}, {1, 2}};
  for (int r = 0; r < 3; ++r) {
    CHECK(d.to_local().shard(r).backend() == "meta");
    CHECK(d.to_local().shard(r).sizes() == expected[static_cast<size_t>(r)]);
  }
  // A local cpu tensor too; and a meta tensor on a cpu mesh stays on meta (nothing to move to cpu).
  const ts::DTensor from_local = ts::distribute_tensor(ts::randn({4, 3}), mesh, {ts::Replicate()});
  CHECK(from_local.to_local().shard(2).backend() == "meta");
  const ts::DTensor stays =
      ts::distribute_tensor(plain({6}, "meta"), ts::init_device_mesh("cpu", {3}), {ts::Shard(0)});
  CHECK(stays.to_local().shard(0).backend() == "meta");
  // A mesh built directly whose device type names no backend is a label (init_device_mesh refuses it).
  const ts::DTensor labelled =
      ts::distribute_tensor(plain({6}, "cpu"), ts::DeviceMesh("tpu", {3}), {ts::Shard(0)});
  CHECK(labelled.to_local().shard(0).backend() == "cpu");
}

TEST_CASE("1024 ranks (32 x 32) and a 16384 x 16384 tensor: planned without allocating its data") {
  // Every rank's copy of a replicated 16384^2 float32 tensor is 1 GiB: 1 TiB in all. Only shapes
  // exist, so the peak RSS of this process stays far below one such copy.
  ts::LocalMode mode(1024);
  const ts::DeviceMesh mesh = ts::init_device_mesh("meta", {32, 32}, {"dp", "tp"});
  const ts::CommCounter counter;
  ts::Tensor big;
  {
    ts::DisabledLocalMode off;
    big = ts::empty({16384, 16384}, on("meta"));
  }
  const ts::DTensor replicated = ts::distribute_tensor(big, mesh, {ts::Replicate(), ts::Replicate()});
  const ts::DTensor sharded = replicated.redistribute({ts::Shard(0), ts::Shard(1)});
  for (int r : {0, 517, 1023}) CHECK(sharded.to_local().shard(r).sizes() == ts::Shape{512, 512});
  const ts::DTensor product = ts::matmul(sharded, replicated.redistribute({ts::Replicate(), ts::Shard(1)}));
  CHECK(product.shape() == ts::Shape{16384, 16384});
  const ts::Tensor full = sharded.full_tensor();
  CHECK(full.shard(1023).sizes() == ts::Shape{16384, 16384});
  // A 4 MiB gradient per rank, all-reduced over every "dp" fibre (32 groups of 32 ranks).
  ts::Tensor summed = ts::randn({1024, 1024}, on("meta"));
  ts::dist::all_reduce(summed, ts::ReduceOp::SUM, mesh.group(0));
  CHECK(summed.shard(5).sizes() == ts::Shape{1024, 1024});
  CHECK(summed.shard(5).backend() == "meta");
  CHECK(counter.calls() > 0);
  CHECK(counter.bytes_per_rank() > int64_t{1} << 30);  // the plan moves gigabytes per rank
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const int64_t peak_mib = usage.ru_maxrss / 1024;  // ru_maxrss is in KiB on Linux
  CAPTURE(peak_mib);
  CHECK(peak_mib < 500);
}
