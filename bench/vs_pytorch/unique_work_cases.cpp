// The unique work of each case in tessera_cases.cpp: the dense ops its program contains, each done
// once on plain tensors (no LocalMode, no mesh), a result every rank holds alike counted once. What
// a program does beyond it (per-rank bookkeeping, copies between ranks, a collective's messages) is
// the simulation's own cost, which the design's limit rule holds to 1.5x of this.
// Each twin has its case's name and returns seconds in the same unit (per rank per op for the adds,
// per iteration for the others), so the ratio of the two is the program's cost over its work.
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "harness.hpp"

namespace ts = tessera;

namespace vs_pytorch {
namespace {

// a + b (or a + 1.0) on 1-element tensors, once; the case divides an op's time by its ranks.
double add_once(int ranks, bool scalar, int warmup, int reps) {
  const ts::Tensor a = ts::ones({1}), b = ts::ones({1});
  ts::Tensor c;
  return mean_seconds(warmup, reps, [&](int) { c = scalar ? a + 1.0 : a + b; }) / ranks;
}

// The sum of `ranks` distinct 16-float vectors, once: every rank's result is the same.
double sum_once(int ranks, int warmup, int reps) {
  std::vector<ts::Tensor> stacked;
  for (int i = 0; i < warmup + reps; ++i)
    stacked.push_back(ts::arange(ranks * 16).to(ts::kFloat32).reshape({ranks, 16}) + static_cast<double>(i));
  ts::Tensor sum;
  return mean_seconds(warmup, reps, [&](int i) { sum = stacked[static_cast<size_t>(i)].sum({0}); });
}

// The 8 gathered 16-float vectors laid side by side, once.
double gather_once(int ranks, int warmup, int reps) {
  std::vector<ts::Tensor> parts;
  for (int r = 0; r < ranks; ++r) parts.push_back(ts::full({16}, static_cast<float>(r)));
  ts::Tensor out;
  return mean_seconds(warmup, reps, [&](int) { out = ts::stack(parts); });
}

// x @ w + b, dense, once.
double linear_once(int warmup, int reps) {
  ts::Generator g(0);
  const ts::Tensor x = ts::randn({64, 1024}, g), w = ts::randn({1024, 1024}, g), b = ts::randn({1024}, g);
  ts::Tensor y;
  return mean_seconds(warmup, reps, [&](int) { y = ts::matmul(x, w) + b; });
}

// The three inputs drawn once and relu(x @ w1) @ w2 dense, once.
double mlp_once(int warmup, int reps) {
  ts::Tensor y;
  return mean_seconds(warmup, reps, [&](int) {
    ts::Generator g(0);
    const ts::Tensor x = ts::randn({64, 1024}, g), w1 = ts::randn({1024, 4096}, g),
                     w2 = ts::randn({4096, 1024}, g);
    y = ts::matmul(ts::relu(ts::matmul(x, w1)), w2);
  });
}

// [R,S(0),S(1)] on (2,2,2) holds 4 distinct 32x32 pieces of the 64x64 tensor: each cut once.
double pieces_once(int warmup, int reps) {
  ts::Generator g(0);
  const ts::Tensor plain = ts::randn({64, 64}, g);
  std::vector<ts::Tensor> pieces(4);
  return mean_seconds(warmup, reps, [&](int) {
    for (int64_t p = 0; p < 4; ++p)
      pieces[p] = plain.narrow(0, p / 2 * 32, 32).narrow(1, p % 2 * 32, 32).contiguous();
  });
}

// A replicated tensor of 1024 floats: one copy, held by every rank.
double copy_once(int warmup, int reps) {
  const ts::Tensor plain = ts::arange(1024).to(ts::kFloat32);
  ts::Tensor copy;
  return mean_seconds(warmup, reps, [&](int) { copy = plain.clone(); });
}

// distribute_tensor [S(0),S(1)] then full_tensor of a 64x64 tensor: its pieces cut once (one copy
// of the tensor) and joined once (another).
double cut_and_join_once(int64_t rows, int64_t cols, int warmup, int reps) {
  const ts::Tensor plain = ts::arange(64 * 64).to(ts::kFloat32).reshape({64, 64});
  ts::Tensor joined;
  return mean_seconds(warmup, reps, [&](int) {
    std::vector<ts::Tensor> row_blocks;
    for (const ts::Tensor& band : ts::chunk(plain, rows, 0)) {
      std::vector<ts::Tensor> pieces;
      for (const ts::Tensor& piece : ts::chunk(band, cols, 1)) pieces.push_back(piece.contiguous());
      row_blocks.push_back(ts::cat(pieces, 1));
    }
    joined = ts::cat(row_blocks, 0);
  });
}

}  // namespace

std::vector<Case> unique_work_cases() {
  using std::to_string;
  std::vector<Case> twins;
  for (int ranks : {8, 64}) {
    twins.push_back({"add_1elem_r" + to_string(ranks), "one 1-element add", 0, 0,
                     [ranks](int w, int r) { return add_once(ranks, false, w, r); }});
    twins.push_back({"add_scalar_r" + to_string(ranks), "one 1-element add of a scalar", 0, 0,
                     [ranks](int w, int r) { return add_once(ranks, true, w, r); }});
  }
  for (int ranks : {8, 256, 1024, 4096})
    twins.push_back({"all_reduce16_r" + to_string(ranks), "one sum over dim 0 of [ranks, 16]", 0, 0,
                     [ranks](int w, int r) { return sum_once(ranks, w, r); }});
  twins.push_back({"all_gather16_r8", "one stack of 8 16-float vectors", 0, 0,
                   [](int w, int r) { return gather_once(8, w, r); }});
  twins.push_back({"linear_r8", "x @ w + b once", 0, 0, [](int w, int r) { return linear_once(w, r); }});
  twins.push_back({"tp_mlp_r8", "randn x, w1, w2 + relu(x @ w1) @ w2 once", 0, 0,
                   [](int w, int r) { return mlp_once(w, r); }});
  twins.push_back({"redistribute3d_r8", "4 distinct 32x32 pieces cut once", 0, 0,
                   [](int w, int r) { return pieces_once(w, r); }});
  twins.push_back(
      {"replicate1024_r1024", "one copy of 1024 floats", 0, 0, [](int w, int r) { return copy_once(w, r); }});
  for (const auto& mesh : std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {64, 16}, {64, 64}}) {
    // Named, not structured bindings: clang 14 cannot capture one.
    const int64_t rows = mesh.first, cols = mesh.second;
    twins.push_back({"dist_full64x64_r" + to_string(rows * cols), "64x64 cut into pieces and joined once", 0,
                     0, [rows, cols](int w, int r) { return cut_and_join_once(rows, cols, w, r); }});
  }
  return twins;
}

}  // namespace vs_pytorch
