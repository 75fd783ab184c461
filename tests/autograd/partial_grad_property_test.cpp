// Property: random DTensor programs (random placements, random ops, values read by several ops)
// give the gradients of the same program run densely. Gradients travel as per-rank terms wherever
// PyTorch keeps them Partial, pass through replicated ops and are combined where needed; a node
// that let terms through although its backward differs between ranks, or terms combined twice or
// never, shows up here as a wrong gradient.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "mlp_oracle.hpp"

namespace ts = tessera;

namespace {

constexpr int64_t N = 5;  // uneven over 2, 3 and 4 ranks

// A deterministic choice in [0, n): mt19937's raw output is the same on every platform, which the
// standard distributions are not.
struct Dice {
  std::mt19937 engine;
  explicit Dice(uint32_t seed) : engine(seed) {}
  size_t operator()(size_t n) { return static_cast<size_t>(engine() % n); }
};

ts::Placement random_placement(Dice& dice) {
  switch (dice(3)) {
    case 0:
      return ts::Replicate();
    case 1:
      return ts::Shard(0);
    default:
      return ts::Shard(1);
  }
}

ts::Placements random_placements(Dice& dice, const ts::DeviceMesh& mesh) {
  ts::Placements out;
  for (int64_t i = 0; i < mesh.ndim(); ++i) out.push_back(random_placement(dice));
  return out;
}

// One step of a program: an op and the values it reads (indices into the values so far).
struct Step {
  int op = 0;
  size_t a = 0, b = 0;
  int64_t dim = 0;
  ts::Placements target;  // for a redistribution
};
constexpr int kOps = 8;

// The two spellings that differ between the dense and the distributed program: a transpose, and
// a redistribution (a scaling on dense tensors, which have no placements).
ts::Tensor swapped(const ts::Tensor& a) { return a.transpose(0, 1); }
ts::DTensor swapped(const ts::DTensor& a) { return ts::transpose(a, 0, 1); }
ts::Tensor moved(const ts::Tensor& a, const ts::Placements&) { return a * 1.5; }
ts::DTensor moved(const ts::DTensor& a, const ts::Placements& target) { return a.redistribute(target) * 1.5; }

template <class T>
T run_step(const Step& s, const std::vector<T>& v) {
  const T& a = v[s.a];
  const T& b = v[s.b];
  switch (s.op) {
    case 0:
      return ts::matmul(a, b) * 0.25;
    case 1:
      return a + b;
    case 2:
      return a * b;
    case 3:
      return ts::tanh(a);
    case 4:
      return ts::softmax(a, s.dim);
    case 5:
      return swapped(a);
    case 6:
      return a + ts::sum(a, {s.dim}, true);
    default:
      return moved(a, s.target);
  }
}

void check_close(const ts::Tensor& got, const ts::Tensor& want, const std::string& what) {
  const std::vector<double> g = got.contiguous().to_vector<double>();
  const std::vector<double> w = want.contiguous().to_vector<double>();
  REQUIRE_MESSAGE(g.size() == w.size(), what);
  for (size_t i = 0; i < g.size(); ++i)
    REQUIRE_MESSAGE(g[i] == doctest::Approx(w[i]).epsilon(1e-9).scale(1.0), what << " index " << i);
}

void run_random_program(uint32_t seed, const ts::DeviceMesh& mesh) {
  Dice dice(seed);
  const size_t num_leaves = 3;
  std::vector<ts::Tensor> dense_leaves;
  std::vector<ts::DTensor> leaves;
  std::vector<ts::Placements> leaf_placements;
  for (size_t i = 0; i < num_leaves; ++i) {
    const ts::Tensor value =
        ts::from_values(oracle::distinct(N * N, static_cast<double>(seed % 97 + i)), {N, N}, ts::kFloat64);
    dense_leaves.push_back(value.clone().set_requires_grad(true));
    leaf_placements.push_back(random_placements(dice, mesh));
    leaves.push_back(ts::distribute_tensor(value, mesh, leaf_placements.back()).set_requires_grad(true));
  }
  std::vector<ts::Tensor> dense(dense_leaves.begin(), dense_leaves.end());
  std::vector<ts::DTensor> distributed(leaves.begin(), leaves.end());
  std::string program;
  for (int k = 0; k < 7; ++k) {
    Step s;
    s.op = static_cast<int>(dice(kOps));
    s.a = dice(dense.size());
    s.b = dice(dense.size());
    s.dim = static_cast<int64_t>(dice(2));
    s.target = random_placements(dice, mesh);
    program += std::to_string(s.op) + "(" + std::to_string(s.a) + "," + std::to_string(s.b) + ") ";
    dense.push_back(run_step(s, dense));
    distributed.push_back(run_step(s, distributed));
  }
  // The loss reads the last two values, so that gradients from several paths meet.
  const ts::Tensor c = ts::from_values(oracle::distinct(N * N, 5), {N, N}, ts::kFloat64);
  const ts::DTensor dc = ts::distribute_tensor(c, mesh, random_placements(dice, mesh));
  const size_t last = dense.size() - 1;
  ts::sum(dense[last] * c + dense[last - 1]).backward();
  ts::sum(distributed[last] * dc + distributed[last - 1]).backward();
  CAPTURE(program);
  for (size_t i = 0; i < num_leaves; ++i) {
    CAPTURE(i);
    CAPTURE(ts::placements_text(leaf_placements[i]));
    if (!dense_leaves[i].grad().defined()) {
      CHECK_FALSE(leaves[i].has_grad());
      continue;
    }
    REQUIRE(leaves[i].has_grad());
    ts::NoGradGuard off;
    check_close(leaves[i].grad().full_tensor().reconcile(), dense_leaves[i].grad(), "gradient");
  }
}

}  // namespace

TEST_CASE("property: random DTensor programs give the dense program's gradients") {
  const std::vector<ts::DeviceMesh> meshes = {
      ts::init_device_mesh("cpu", {2}), ts::init_device_mesh("cpu", {3}), ts::init_device_mesh("cpu", {2, 2}),
      ts::init_device_mesh("cpu", {2, 3})};
  for (const ts::DeviceMesh& mesh : meshes)
    for (uint32_t seed = 1; seed <= 60; ++seed) {
      CAPTURE(mesh.to_string());
      CAPTURE(seed);
      run_random_program(seed, mesh);
    }
}
