// The Tessera side of the PyTorch LocalTensor comparison. compare.py runs the
// same programs in PyTorch (LocalTensorMode, DTensor on a fake process group) and joins the two by
// case name, so a case here and its twin there must do the same work: keep them in step.
//
// Inputs each case needs but does not time (plain tensors, meshes, per-iteration inputs) are built
// before the clock starts. Collectives get fresh, rank-dependent inputs every iteration, so no
// iteration reduces values a previous one already made identical on every rank.
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "harness.hpp"

namespace ts = tessera;

namespace vs_pytorch {
namespace {

// Fails the run when a case computed something wrong: a fast wrong answer is no result.
void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("wrong result: " + what);
}

// One op per iteration on every rank; the time is per rank per op (the iteration's time / ranks).
double add_one_element(int ranks, bool scalar, int warmup, int reps) {
  ts::LocalMode mode(ranks);
  const ts::Tensor a = ts::ones({1});
  const ts::Tensor b = ts::ones({1});
  ts::Tensor c;
  const double seconds = mean_seconds(warmup, reps, [&](int) { c = scalar ? a + 1.0 : a + b; });
  check(c.shard(ranks - 1).item<float>() == 2.f, "1 + 1 on the last rank");
  return seconds / ranks;
}

// Shard r of input i is full({16}, r + i): every rank's value differs, and so does every input.
std::vector<ts::Tensor> distinct_inputs(int count) {
  std::vector<ts::Tensor> inputs;
  inputs.reserve(count);
  for (int i = 0; i < count; ++i)
    inputs.push_back(ts::rank_map([i](int rank) { return ts::full({16}, static_cast<float>(rank + i)); }));
  return inputs;
}

double all_reduce16(int ranks, int warmup, int reps) {
  ts::LocalMode mode(ranks);
  std::vector<ts::Tensor> inputs = distinct_inputs(warmup + reps);
  const double seconds =
      mean_seconds(warmup, reps, [&](int i) { ts::dist::all_reduce(inputs[i], ts::ReduceOp::SUM); });
  // Sum over r of (r + i) for the last input, exact in float32 for these sizes.
  const int last = warmup + reps - 1;
  const double expected = ranks * (ranks - 1) / 2.0 + static_cast<double>(ranks) * last;
  check(inputs.back().shard(ranks / 2).narrow(0, 15, 1).item<float>() == static_cast<float>(expected),
        "all_reduce sum");
  return seconds;
}

double all_gather16(int ranks, int warmup, int reps) {
  ts::LocalMode mode(ranks);
  const ts::Tensor input = distinct_inputs(1).front();
  std::vector<ts::Tensor> outputs;
  for (int r = 0; r < ranks; ++r) outputs.push_back(ts::zeros_like(input));
  const double seconds = mean_seconds(warmup, reps, [&](int) { ts::dist::all_gather(outputs, input); });
  check(outputs[ranks - 1].shard(0).narrow(0, 15, 1).item<float>() == static_cast<float>(ranks - 1),
        "all_gather slot");
  return seconds;
}

// x[64,1024] S(0) @ w[1024,1024] R + b[1024] R on a 1-d mesh of 8, gathered with full_tensor.
double linear(int warmup, int reps) {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {8});
  ts::Tensor px, pw, pb;
  {
    auto off = mode.disable();
    ts::Generator g(0);
    px = ts::randn({64, 1024}, g), pw = ts::randn({1024, 1024}, g), pb = ts::randn({1024}, g);
  }
  const ts::DTensor x = ts::distribute_tensor(px, mesh, {ts::Shard(0)});
  const ts::DTensor w = ts::distribute_tensor(pw, mesh, {ts::Replicate()});
  const ts::DTensor b = ts::distribute_tensor(pb, mesh, {ts::Replicate()});
  ts::Tensor y;
  const double seconds = mean_seconds(warmup, reps, [&](int) { y = (ts::matmul(x, w) + b).full_tensor(); });
  check(y.shard(0).shape().to_shape() == ts::Shape{64, 1024}, "linear output shape");
  return seconds;
}

// The whole tensor-parallel MLP program: random inputs drawn inside local mode (every rank the
// same), laid out on a (4,2) (dp,tp) mesh, column- then row-parallel, gathered.
double tp_mlp(int warmup, int reps) {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
  ts::Tensor y;
  const double seconds = mean_seconds(warmup, reps, [&](int) {
    mode.manual_seed(0);
    const ts::Tensor x = ts::randn({64, 1024}), w1 = ts::randn({1024, 4096}), w2 = ts::randn({4096, 1024});
    const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()});
    const ts::DTensor dw1 = ts::distribute_tensor(w1, mesh, {ts::Replicate(), ts::Shard(1)});
    const ts::DTensor dw2 = ts::distribute_tensor(w2, mesh, {ts::Replicate(), ts::Shard(0)});
    y = ts::matmul(ts::relu(ts::matmul(dx, dw1)), dw2).full_tensor();
  });
  check(y.shard(7).shape().to_shape() == ts::Shape{64, 1024}, "MLP output shape");
  return seconds;
}

// A 64x64 tensor on a (2,2,2) mesh from [S(0),S(1),R] to [R,S(0),S(1)].
double redistribute_3d(int warmup, int reps) {
  ts::LocalMode mode(8);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2, 2});
  ts::Tensor plain;
  {
    auto off = mode.disable();
    ts::Generator g(0);
    plain = ts::randn({64, 64}, g);
  }
  const ts::DTensor source =
      ts::distribute_tensor(plain, mesh, {ts::Shard(0), ts::Shard(1), ts::Replicate()});
  std::optional<ts::DTensor> target;
  const double seconds = mean_seconds(warmup, reps, [&](int) {
    target = source.redistribute({ts::Replicate(), ts::Shard(0), ts::Shard(1)});
  });
  check(target->to_local().shard(0).shape().to_shape() == ts::Shape{32, 32}, "redistributed shard shape");
  return seconds;
}

// distribute_tensor of a plain 1024-float tensor, Replicate over a 1-d mesh of `ranks`.
double replicate(int ranks, int warmup, int reps) {
  ts::LocalMode mode(ranks);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {ranks});
  ts::Tensor plain;
  {
    auto off = mode.disable();
    plain = ts::arange(1024).to(ts::kFloat32);
  }
  std::optional<ts::DTensor> d;
  const double seconds =
      mean_seconds(warmup, reps, [&](int) { d = ts::distribute_tensor(plain, mesh, {ts::Replicate()}); });
  check(d->to_local().shard(ranks - 1).sum().item<float>() == 1023.f * 1024.f / 2.f, "replicated sum");
  return seconds;
}

// distribute_tensor of a plain 64x64 tensor as [S(0),S(1)] on a 2-d mesh, then full_tensor.
double distribute_full(int64_t rows, int64_t cols, int warmup, int reps) {
  ts::LocalMode mode(static_cast<int>(rows * cols));
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {rows, cols});
  ts::Tensor plain;
  {
    auto off = mode.disable();
    plain = ts::arange(64 * 64).to(ts::kFloat32).reshape({64, 64});
  }
  ts::Tensor full;
  const double seconds = mean_seconds(warmup, reps, [&](int) {
    full = ts::distribute_tensor(plain, mesh, {ts::Shard(0), ts::Shard(1)}).full_tensor();
  });
  check(ts::equal(full.shard(static_cast<int>(rows * cols) - 1), plain), "full_tensor of the last rank");
  return seconds;
}

}  // namespace

std::vector<Case> all_cases() {
  using std::to_string;
  std::vector<Case> cases;
  for (int ranks : {8, 64}) {
    cases.push_back({"add_1elem_r" + to_string(ranks), "a + b, 1-element tensors; seconds per rank per op",
                     20000, 2000, [ranks](int w, int r) { return add_one_element(ranks, false, w, r); }});
    cases.push_back({"add_scalar_r" + to_string(ranks), "a + 1.0, 1-element tensor; seconds per rank per op",
                     20000, 2000, [ranks](int w, int r) { return add_one_element(ranks, true, w, r); }});
  }
  cases.push_back({"all_reduce16_r8", "all_reduce SUM of 16 floats, 8 ranks", 2000, 200,
                   [](int w, int r) { return all_reduce16(8, w, r); }});
  cases.push_back({"all_gather16_r8", "all_gather of 16 floats into 8 outputs, 8 ranks", 2000, 200,
                   [](int w, int r) { return all_gather16(8, w, r); }});
  cases.push_back({"linear_r8", "(x[64,1024] S(0) @ w[1024,1024] R + b R).full_tensor(), 8 ranks", 20, 3,
                   [](int w, int r) { return linear(w, r); }});
  cases.push_back({"tp_mlp_r8", "randn x,w1,w2 + distribute + relu(x@w1)@w2 + full_tensor, (4,2) mesh", 2, 1,
                   [](int w, int r) { return tp_mlp(w, r); }});
  cases.push_back({"redistribute3d_r8", "64x64 [S(0),S(1),R] -> [R,S(0),S(1)] on a (2,2,2) mesh", 200, 20,
                   [](int w, int r) { return redistribute_3d(w, r); }});
  cases.push_back({"replicate1024_r1024", "distribute_tensor(1024 floats, [R]) over 1024 ranks", 10, 2,
                   [](int w, int r) { return replicate(1024, w, r); }});
  for (int ranks : {256, 1024, 4096})
    cases.push_back({"all_reduce16_r" + to_string(ranks),
                     "all_reduce SUM of 16 floats, " + to_string(ranks) + " ranks", ranks >= 1024 ? 2 : 5, 1,
                     [ranks](int w, int r) { return all_reduce16(ranks, w, r); }});
  const std::vector<std::pair<int64_t, int64_t>> meshes = {{16, 16}, {64, 16}, {64, 64}};
  for (const auto& mesh : meshes) {
    const int64_t rows = mesh.first, cols = mesh.second;  // not structured bindings: the lambda captures them
    const std::string ranks = to_string(rows * cols);
    cases.push_back({"dist_full64x64_r" + ranks,
                     "distribute_tensor(64x64, [S(0),S(1)]) + full_tensor on a (" + to_string(rows) + "," +
                         to_string(cols) + ") mesh",
                     rows * cols >= 1024 ? 2 : 5, 1,
                     [rows, cols](int w, int r) { return distribute_full(rows, cols, w, r); }});
  }
  return cases;
}

}  // namespace vs_pytorch
